import { byteSize } from './byte-size.js';
import { type Bar, barChart } from './charts.js';
import { escapeHtml } from './html-escape.js';
import { FRESHNESS_DAYS, type PageStatsData, RECENT_DAYS } from './page-stats.js';
import { reportPage, totals, urlListSection } from './report-page.js';
import { MAX_LISTED_URLS, type ReportSitemap, type SiteReportData, URLS_PER_SITEMAP } from './site-report.js';
import type { WarningGroup } from './warning-groups.js';

/** Months shown one bar each; older `lastmod`s share one "earlier" bar (the counts stay exact). */
export const MAX_MONTH_BARS = 120;

function plural(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '0 %' : `${((100 * part) / whole).toFixed(1)} %`;
}

/** Every month from the first to the last present, gaps included as zero bars. */
export function monthBars(byMonth: Record<string, number>): Bar[] {
  const months = Object.keys(byMonth).sort();
  if (months.length === 0) return [];
  const bars: Bar[] = [];
  let [y, m] = months[0].split('-').map(Number);
  const last = months[months.length - 1];
  for (;;) {
    const key = `${y}-${String(m).padStart(2, '0')}`;
    bars.push({ label: key, value: byMonth[key] ?? 0 });
    if (key >= last) break;
    if (++m > 12) {
      m = 1;
      y++;
    }
  }
  if (bars.length <= MAX_MONTH_BARS) return bars;
  const older = bars.slice(0, bars.length - (MAX_MONTH_BARS - 1));
  const earlier: Bar = { label: `before ${bars[bars.length - (MAX_MONTH_BARS - 1)].label}`, value: 0 };
  for (const b of older) earlier.value += b.value;
  return [earlier, ...bars.slice(bars.length - (MAX_MONTH_BARS - 1))];
}

/** The last RECENT_DAYS days up to `today` (`YYYY-MM-DD`), one bar each. */
export function dayBars(byDay: Record<string, number>, today: string): Bar[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  const bars: Bar[] = [];
  for (let i = RECENT_DAYS - 1; i >= 0; i--) {
    const key = new Date(end - i * 86_400_000).toISOString().slice(0, 10);
    bars.push({ label: key.slice(5), value: byDay[key] ?? 0 });
  }
  return bars;
}

function counted(counts: Record<string, number>, order?: readonly string[]): Bar[] {
  const keys = order ?? Object.keys(counts).sort();
  return keys.map((k) => ({ label: k, value: counts[k] ?? 0 }));
}

function topCounts(counts: Record<string, number>, n: number): Bar[] {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, n)
    .map(([label, value]) => ({ label, value }));
}

function treeSection(sitemaps: readonly ReportSitemap[]): string {
  const out: string[] = [];
  let open = 0;
  sitemaps.forEach((s, i) => {
    while (open > s.depth) {
      out.push('</details>');
      open--;
    }
    const hasChildren = i + 1 < sitemaps.length && sitemaps[i + 1].depth > s.depth;
    const requested = s.status !== null || s.bytes !== null;
    const facts = [
      requested ? (s.status === null ? 'no HTTP answer' : `HTTP ${s.status}`) : '',
      s.bytes === null ? '' : byteSize(s.bytes),
      s.ms === null ? '' : `${s.ms} ms`,
      `${plural(s.pages, 'page')}${hasChildren ? ' below' : ''}`,
      s.warnings > 0 ? plural(s.warnings, 'warning') : '',
    ].filter((f) => f !== '');
    const reason = s.reason === null ? '' : ` <span class="bad">${escapeHtml(s.reason)}</span>`;
    out.push(
      `<details class="node${hasChildren ? '' : ' leaf'}" data-url="${escapeHtml(s.url)}"${s.depth <= 1 ? ' open' : ''}><summary><span class="type">${escapeHtml(s.type)}</span>${escapeHtml(s.url)}<span class="facts">${escapeHtml(facts.join(' · '))}</span>${reason}</summary>`,
    );
    if (!hasChildren) out.push('</details>');
    else open = s.depth + 1;
  });
  while (open-- > 0) out.push('</details>');
  return `<section id="tree"><h2>Sitemaps</h2><div class="controls no-print"><button id="tree-expand" type="button">Expand all</button><button id="tree-collapse" type="button">Collapse all</button></div>${out.join('')}</section>`;
}

function lastmodSection(st: PageStatsData, today: string): string {
  const noLastmod = st.pages - st.withLastmod;
  const fresh = FRESHNESS_DAYS.map((d) => ({
    label: `updated within ${d} days`,
    value: st.freshWithin[d],
    id: `fresh-${d}`,
  }));
  return `<section id="lastmod"><h2>Freshness</h2>${totals([
    ...fresh.map((f) => ({ ...f, label: `${f.label} (${percent(f.value, st.pages)})` })),
    { label: `without lastmod (${percent(noLastmod, st.pages)})`, value: noLastmod, id: 'no-lastmod' },
    {
      label: 'lastmod in the future',
      value: st.futureLastmod,
      id: 'future-lastmod',
      tone: st.futureLastmod > 0 ? 'bad' : undefined,
    },
  ])}${barChart({ id: 'lastmod-month', title: 'lastmod by month', caption: 'pages whose <lastmod> falls in each month', bars: monthBars(st.lastmodByMonth) })}${barChart({ id: 'lastmod-day', title: `lastmod, last ${RECENT_DAYS} days`, caption: `pages whose <lastmod> falls on each day up to ${today}`, bars: dayBars(st.lastmodByDay, today) })}</section>`;
}

function fieldsSection(st: PageStatsData): string {
  return `<section id="fields"><h2>changefreq and priority</h2>${barChart({ id: 'changefreq', title: 'changefreq', caption: 'pages per <changefreq> value (none: not given)', bars: counted(st.changefreq, ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never', 'none']) })}${barChart({ id: 'priority', title: 'priority', caption: 'pages per <priority> (0.5 when not given, as the protocol says)', bars: counted(st.priority) })}</section>`;
}

function mediaSection(st: PageStatsData): string {
  const news =
    st.newsStories === 0
      ? '<p class="muted">No Google News stories.</p>'
      : `${barChart({ id: 'news-day', title: 'News stories per day', caption: 'stories by publication date', bars: counted(st.newsByDay) })}${barChart({ id: 'news-publication', title: 'News stories per publication', caption: 'the 20 publications with most stories', bars: topCounts(st.newsByPublication, 20), horizontal: true })}`;
  const hreflang =
    st.withAlternates === 0
      ? '<p class="muted">No hreflang alternates.</p>'
      : `${barChart({ id: 'hreflang', title: 'hreflang languages', caption: 'pages naming each language (the 30 most frequent)', bars: topCounts(st.hreflang, 30), horizontal: true })}<p>${st.missingReturnLinks.toLocaleString('en-US')} of ${st.hreflangChecked.toLocaleString('en-US')} checked pages name an alternate that does not link back${st.hreflangChecked < st.withAlternates ? ` (the first ${st.hreflangChecked.toLocaleString('en-US')} of ${st.withAlternates.toLocaleString('en-US')} pages with alternates were checked)` : ''}.</p>${exampleTable(
          ['page', 'alternate without a return link'],
          st.missingReturnExamples.map((e) => [e.page, e.alternate]),
        )}`;
  return `<section id="media"><h2>News, images, videos, hreflang</h2>${totals([
    { label: 'News stories', value: st.newsStories, id: 'news' },
    {
      label: `pages with images (${st.images.toLocaleString('en-US')} images)`,
      value: st.withImages,
      id: 'with-images',
    },
    { label: 'pages with videos', value: st.withVideos, id: 'with-videos' },
    { label: 'pages with hreflang alternates', value: st.withAlternates, id: 'with-alternates' },
  ])}${news}${hreflang}</section>`;
}

function exampleTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  return `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td class="url">${escapeHtml(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

export function warningsSection(groups: readonly WarningGroup[]): string {
  if (groups.length === 0) return '<section id="warnings"><h2>Warnings</h2><p class="ok">None.</p></section>';
  const rows = groups
    .map(
      (g) =>
        `<tr data-code="${escapeHtml(g.code)}"><td><code>${escapeHtml(g.code)}</code></td><td class="n">${g.count.toLocaleString('en-US')}</td><td>${escapeHtml(g.meaning ?? 'a plugin’s own warning')}<details><summary>${g.examples.length} example${g.examples.length === 1 ? '' : 's'}</summary>${exampleTable(
          ['sitemap', 'message'],
          g.examples.map((e) => [e.url, e.message]),
        )}</details></td></tr>`,
    )
    .join('');
  return `<section id="warnings"><h2>Warnings</h2><table><thead><tr><th>code</th><th class="n">count</th><th>what it means</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** The one-site report as an HTML page. */
export function siteReportHtml(r: SiteReportData): string {
  const st = r.stats;
  const invalid = r.sitemaps.filter((s) => s.type === 'InvalidSitemap').length;
  const warnings = r.warnings.reduce((n, g) => n + g.count, 0);
  const today = r.generatedAt.slice(0, 10);
  const outcome =
    r.summary.outcome === 'ok'
      ? '<span class="ok">walk complete</span>'
      : `<span class="bad">${escapeHtml(r.summary.outcome)}</span>${r.summary.reason === null ? '' : `: ${escapeHtml(r.summary.reason)}`}`;
  const header = `<header><h1>Sitemap report: ${escapeHtml(r.url)}</h1><p class="muted">Generated by usp on ${escapeHtml(r.generatedAt)} · ${outcome}</p>${totals(
    [
      { label: 'pages', value: st.pages, id: 'pages' },
      {
        label: 'sitemaps',
        value: r.sitemaps.filter((s) => s.type !== 'IndexWebsiteSitemap').length,
        id: 'sitemaps',
      },
      { label: 'could not be read', value: invalid, id: 'invalid', tone: invalid > 0 ? 'bad' : undefined },
      { label: 'warnings', value: warnings, id: 'warnings', tone: warnings > 0 ? 'bad' : undefined },
    ],
  )}</header>`;
  const groups = r.sitemaps.filter((s) => s.urls.length > 0).map((s) => ({ sitemap: s.url, urls: s.urls }));
  const caption = `${r.listedUrls.toLocaleString('en-US')} of ${st.pages.toLocaleString('en-US')} URLs are listed (at most ${URLS_PER_SITEMAP.toLocaleString('en-US')} a sitemap and ${MAX_LISTED_URLS.toLocaleString('en-US')} in all); every count above is exact.`;
  return reportPage(
    `usp report: ${r.url}`,
    `${header}${treeSection(r.sitemaps)}${lastmodSection(st, today)}${fieldsSection(st)}${mediaSection(st)}${warningsSection(r.warnings)}${urlListSection(groups, caption)}`,
  );
}
