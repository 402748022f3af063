import { escapeHtml } from './html-escape.js';

export interface Bar {
  label: string;
  value: number;
}

export interface BarChartOptions {
  /** `data-chart` of the figure: what tests and styles find it by. */
  id: string;
  title: string;
  /** One line under the title saying what the chart shows. */
  caption: string;
  bars: readonly Bar[];
  /** Horizontal bars with the label beside each (long labels: hosts, reasons). Default vertical. */
  horizontal?: boolean;
}

const WIDTH = 720;
const V_HEIGHT = 150;
/** Few bars stay bar-shaped instead of filling the width. */
const MAX_BAR_W = 48;
const V_MARGIN = 24;
const H_ROW = 18;
const LABEL_W = 260;

function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * An SVG bar chart written here rather than by a charting library: bars, labels and a value on
 * each, nothing animated, so it costs no script, prints as it shows, and reads without one
 * (each bar's `<title>` gives its label and value to screen readers and on hover).
 */
export function barChart(o: BarChartOptions): string {
  const head = `<figure class="chart" data-chart="${o.id}"><figcaption><strong>${escapeHtml(o.title)}</strong> <span>${escapeHtml(o.caption)}</span></figcaption>`;
  if (o.bars.length === 0) return `${head}<p class="empty">Nothing to show.</p></figure>`;
  const svg = o.horizontal ? horizontalBars(o) : verticalBars(o);
  return `${head}${svg}</figure>`;
}

function verticalBars(o: BarChartOptions): string {
  const max = Math.max(1, ...o.bars.map((b) => b.value));
  const n = o.bars.length;
  // A margin each side, so that the first and last labels are not cut.
  const slot = (WIDTH - 2 * V_MARGIN) / n;
  const barW = Math.min(MAX_BAR_W, Math.max(1, slot * 0.8));
  // Label every bar when they fit, else about 12 evenly spaced ones.
  const every = Math.max(1, Math.ceil(n / 12));
  const parts: string[] = [];
  o.bars.forEach((b, i) => {
    const h = Math.round((b.value / max) * (V_HEIGHT - 20));
    const x = (V_MARGIN + i * slot + (slot - barW) / 2).toFixed(1);
    const y = V_HEIGHT - h;
    parts.push(
      `<rect class="bar" x="${x}" y="${y}" width="${barW.toFixed(1)}" height="${h}" data-label="${escapeHtml(b.label)}" data-value="${b.value}"><title>${escapeHtml(b.label)}: ${formatCount(b.value)}</title></rect>`,
    );
    if (i % every === 0) {
      const cx = (V_MARGIN + i * slot + slot / 2).toFixed(1);
      parts.push(
        `<text class="label" x="${cx}" y="${V_HEIGHT + 14}" text-anchor="middle">${escapeHtml(b.label)}</text>`,
      );
    }
  });
  parts.push(`<text class="max" x="0" y="10">${formatCount(max)}</text>`);
  return `<svg viewBox="0 0 ${WIDTH} ${V_HEIGHT + 20}" role="img" aria-label="${escapeHtml(o.title)}">${parts.join('')}</svg>`;
}

function horizontalBars(o: BarChartOptions): string {
  const max = Math.max(1, ...o.bars.map((b) => b.value));
  const plotW = WIDTH - LABEL_W - 70;
  const parts: string[] = [];
  o.bars.forEach((b, i) => {
    const y = i * H_ROW;
    const w = Math.max(b.value > 0 ? 1 : 0, Math.round((b.value / max) * plotW));
    const label = b.label.length > 42 ? `${b.label.slice(0, 41)}…` : b.label;
    parts.push(
      `<text class="label" x="${LABEL_W - 6}" y="${y + 13}" text-anchor="end">${escapeHtml(label)}</text>`,
      `<rect class="bar" x="${LABEL_W}" y="${y + 3}" width="${w}" height="${H_ROW - 6}" data-label="${escapeHtml(b.label)}" data-value="${b.value}"><title>${escapeHtml(b.label)}: ${formatCount(b.value)}</title></rect>`,
      `<text class="value" x="${LABEL_W + w + 4}" y="${y + 13}">${formatCount(b.value)}</text>`,
    );
  });
  const h = o.bars.length * H_ROW;
  return `<svg viewBox="0 0 ${WIDTH} ${h}" role="img" aria-label="${escapeHtml(o.title)}">${parts.join('')}</svg>`;
}
