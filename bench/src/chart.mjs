// The README chart: wall time and peak RSS against the number of URLs of the site inputs, for us,
// the peers and the floor. Vega-Lite compiled to Vega and rendered headless to SVG (and to PNG
// with resvg when it is installed).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import * as vega from 'vega';
import { compile } from 'vega-lite';
import { QUOTED } from './report.mjs';

const SERIES = ['ours', 'crawlee', 'sitemapper', 'sax'];

export function chartData(results) {
  const rows = [];
  for (const c of results.cases.filter((x) => x.scale)) {
    for (const id of SERIES) {
      const r = c.results[id];
      if (!r?.median) continue;
      rows.push({
        impl: r.label,
        urls: c.urls,
        seconds: r.median.wallMs / 1000,
        rssMiB: r.median.maxRssKiB / 1024,
        quoted: false,
      });
    }
  }
  if (results.profile === 'full') {
    rows.push({
      impl: 'usp 1.8.1, Python (quoted)',
      urls: 1_000_000,
      seconds: QUOTED.uspBigSiteWallS,
      rssMiB: QUOTED.uspBigSiteRssMiB,
      quoted: true,
    });
  }
  return rows;
}

export function chartSpec(rows) {
  const x = {
    field: 'urls',
    type: 'quantitative',
    title: 'URLs in the site',
    scale: { type: 'log' },
    axis: { format: '~s', values: [...new Set(rows.map((r) => r.urls))].sort((a, b) => a - b) },
  };
  const color = {
    field: 'impl',
    type: 'nominal',
    title: null,
    legend: { orient: 'bottom', columns: 3, labelLimit: 320 },
  };
  const layer = (field, title, log) => ({
    width: 340,
    height: 260,
    layer: [
      {
        mark: { type: 'line', point: { size: 50 } },
        transform: [{ filter: '!datum.quoted' }],
        encoding: {
          x,
          y: { field, type: 'quantitative', title, scale: log ? { type: 'log' } : { zero: true } },
          color,
        },
      },
      {
        mark: { type: 'point', shape: 'diamond', size: 110, filled: true },
        transform: [{ filter: 'datum.quoted' }],
        encoding: { x, y: { field, type: 'quantitative' }, color },
      },
    ],
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Streaming a whole site over loopback (median of runs)', fontSize: 14 },
    data: { values: rows },
    config: { font: 'DejaVu Sans', background: 'white' },
    hconcat: [layer('seconds', 'wall time (s, log)', true), layer('rssMiB', 'peak RSS (MiB, log)', true)],
    resolve: { scale: { color: 'shared' } },
  };
}

export async function renderChart(results, outDir) {
  const rows = chartData(results);
  if (rows.length === 0) return;
  const view = new vega.View(vega.parse(compile(chartSpec(rows)).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  writeFileSync(path.join(outDir, 'chart.svg'), svg);
  try {
    const { Resvg } = await import('@resvg/resvg-js');
    const png = new Resvg(svg, {
      background: 'white',
      fitTo: { mode: 'zoom', value: 2 },
      font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
    })
      .render()
      .asPng();
    writeFileSync(path.join(outDir, 'chart.png'), png);
  } catch {
    // The PNG is a convenience; the SVG is what the README shows.
  }
}
