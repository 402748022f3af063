import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Page, SitemapDate } from '@usp-ts/core';
import { describe, expect, it } from 'vitest';
import { collectBatchReport, reasonKey } from '../src/report/batch-report.js';
import { barChart } from '../src/report/charts.js';
import { scriptJson } from '../src/report/html-escape.js';
import { PageStats } from '../src/report/page-stats.js';
import { dayBars, MAX_MONTH_BARS, monthBars } from '../src/report/site-html.js';
import { WARNING_MEANINGS } from '../src/report/warning-groups.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const DAY = 86_400_000;

function page(url: string, extra: Partial<Page> = {}): Page {
  return {
    url,
    priority: 0.5,
    lastModified: null,
    changeFrequency: null,
    newsStory: null,
    images: null,
    alternates: null,
    ...extra,
  };
}

const at = (ms: number) => new SitemapDate(ms, 0);

describe('PageStats', () => {
  it('counts freshness windows, pages without lastmod and lastmods in the future exactly', () => {
    const s = new PageStats(NOW);
    s.add(page('https://a/1', { lastModified: at(NOW - 2 * DAY) }));
    s.add(page('https://a/2', { lastModified: at(NOW - 20 * DAY) }));
    s.add(page('https://a/3', { lastModified: at(NOW - 200 * DAY) }));
    s.add(page('https://a/4', { lastModified: at(NOW - 900 * DAY) }));
    s.add(page('https://a/5', { lastModified: at(NOW + 5 * DAY) }));
    s.add(page('https://a/6'));
    const d = s.finish();
    expect(d.pages).toBe(6);
    expect(d.withLastmod).toBe(5);
    expect(d.futureLastmod).toBe(1);
    expect(d.freshWithin).toEqual({ 7: 1, 30: 2, 365: 3 });
    // Two pages fall in the last 60 days, each on its own day.
    expect(Object.values(d.lastmodByDay).reduce((a, b) => a + b, 0)).toBe(2);
    expect(Object.values(d.lastmodByMonth).reduce((a, b) => a + b, 0)).toBe(5);
    expect(d.changefreq.none).toBe(6);
    expect(d.priority['0.5']).toBe(6);
  });

  it('finds the pages whose alternate does not name them back, among pages of the walk only', () => {
    const s = new PageStats(NOW);
    const alt = (hreflang: string, href: string) => ({ hreflang, href });
    s.add(page('https://a/en', { alternates: [alt('en', 'https://a/en'), alt('de', 'https://a/de')] }));
    s.add(page('https://a/de', { alternates: [alt('de', 'https://a/de'), alt('en', 'https://a/en')] }));
    // fr names en, en does not name fr; es names a page the walk never listed (not judged).
    s.add(page('https://a/fr', { alternates: [alt('en', 'https://a/en')] }));
    s.add(page('https://a/es', { alternates: [alt('en', 'https://elsewhere/en')] }));
    const d = s.finish();
    expect(d.withAlternates).toBe(4);
    expect(d.hreflang).toEqual({ en: 4, de: 2 });
    expect(d.missingReturnLinks).toBe(1);
    expect(d.missingReturnExamples).toEqual([{ page: 'https://a/fr', alternate: 'https://a/en' }]);
  });
});

describe('chart bars', () => {
  it('fills the months between the first and last lastmod with empty bars', () => {
    expect(monthBars({ '2025-11': 2, '2026-02': 1 })).toEqual([
      { label: '2025-11', value: 2 },
      { label: '2025-12', value: 0 },
      { label: '2026-01', value: 0 },
      { label: '2026-02', value: 1 },
    ]);
  });

  it('puts months past the bar limit in one "before" bar, keeping the total', () => {
    const byMonth: Record<string, number> = { '1999-01': 7 };
    byMonth['2026-11'] = 3;
    const bars = monthBars(byMonth);
    expect(bars).toHaveLength(MAX_MONTH_BARS);
    expect(bars[0]).toEqual({ label: `before ${bars[1].label}`, value: 7 });
    expect(bars.reduce((n, b) => n + b.value, 0)).toBe(10);
  });

  it('shows the last 60 days up to today', () => {
    const bars = dayBars({ '2026-11-29': 4, '2026-10-01': 1, '2026-09-30': 9 }, '2026-11-29');
    expect(bars).toHaveLength(60);
    expect(bars.at(-1)).toEqual({ label: '11-29', value: 4 });
    expect(bars[0]).toEqual({ label: '10-01', value: 1 });
  });

  it('writes one bar a value, labelled, with HTML in labels escaped', () => {
    const svg = barChart({
      id: 't',
      title: 'T',
      caption: 'c',
      bars: [
        { label: '<b>', value: 1 },
        { label: 'x', value: 3 },
      ],
    });
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(2);
    expect(svg).toContain('data-label="&lt;b&gt;"');
    expect(svg).not.toContain('<b>');
  });
});

describe('report data in HTML', () => {
  it('JSON in a script element cannot close it', () => {
    const json = scriptJson({ url: 'https://a/</script><script>alert(1)</script>' });
    expect(json).not.toContain('</script');
    expect(JSON.parse(json)).toEqual({ url: 'https://a/</script><script>alert(1)</script>' });
  });

  it("says what each warning code means, in the words of core's README table", () => {
    const readme = readFileSync(new URL('../../core/README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('## Warning codes'), readme.indexOf('## Also here'));
    const rows = [...table.matchAll(/^\| `([a-z0-9-]+)`\s*\|[^|]*\|\s*(.*?)\s*\|$/gm)];
    expect(rows.length).toBeGreaterThan(20);
    const fromReadme = Object.fromEntries(rows.map((m) => [m[1], m[2].replace('*always*: ', '')]));
    expect(WARNING_MEANINGS).toEqual(fromReadme);
  });
});

describe('collectBatchReport', () => {
  it('reads what the journal says was committed, not a torn tail', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usp-report-batch-'));
    const site = (s: string, status: string, pages: number, reason: string | null = null) =>
      `${JSON.stringify({ site: s, status, reason, pages, sitemaps: 1, requests: 2, notModified: 1, skipped: 0, bytes: 100, ms: 50 })}\n`;
    const sites = [
      site('https://a.test/', 'ok', 2),
      site(
        'https://b.test/',
        'unreachable',
        0,
        'https://b.test/robots.txt: connect ECONNREFUSED 127.0.0.1:9',
      ),
      site(
        'https://c.test/',
        'unreachable',
        0,
        'https://c.test/robots.txt: connect ECONNREFUSED 127.0.0.1:10',
      ),
    ].join('');
    const pageRow = (s: string, url: string, change: string) =>
      `${JSON.stringify({ site: s, sitemap: `${s}sitemap.xml`, url, change })}\n`;
    const pages =
      pageRow('https://a.test/', 'https://a.test/1', 'new') +
      pageRow('https://a.test/', 'https://a.test/2', 'changed');
    const torn = '{"site":"https://d.test/","stat';
    writeFileSync(join(dir, 'sites.ndjson'), sites + torn);
    writeFileSync(
      join(dir, 'pages.ndjson'),
      `${pages}${pageRow('https://d.test/', 'https://d.test/x', 'new')}`,
    );
    writeFileSync(join(dir, 'sitemaps.ndjson'), '{"site":"https://a.test/"}\n');
    const offsets = { pages: Buffer.byteLength(pages), sitemaps: 27, sites: Buffer.byteLength(sites) };
    writeFileSync(
      join(dir, 'journal.ndjson'),
      `${JSON.stringify({ type: 'run', runId: 'r', gzip: false, startedAt: '2026-11-29T00:00:00Z' })}\n${JSON.stringify({ type: 'site', site: 'https://c.test/', status: 'unreachable', offsets })}\n`,
    );
    const r = await collectBatchReport(dir, NOW);
    expect(r.sites).toBe(3);
    expect(r.byStatus).toEqual({ ok: 1, unreachable: 2 });
    expect(r.changes).toMatchObject({ new: 1, changed: 1, removed: 0 });
    expect(r.failing).toEqual([
      {
        reason: 'unreachable: <url>: connect ECONNREFUSED N.N.N.N:N',
        count: 2,
        sites: ['https://b.test/', 'https://c.test/'],
      },
    ]);
    expect(r.notModified).toBe(3);
    expect(r.slowestHosts).toHaveLength(3);
  });

  it('groups reasons with their URLs and numbers made alike', () => {
    expect(reasonKey('https://x/a: 503 Service Unavailable')).toBe('<url>: N Service Unavailable');
    expect(reasonKey(null)).toBe('(no reason given)');
  });
});
