import type { PageRow, SiteCopy, SitemapRow, SiteOutput, SiteResult, SiteSink } from '@usp-ts/batch';
import { newPageDraft, pageToJSON } from '@usp-ts/core';
import { afterEach, describe, expect, it } from 'vitest';

/** What a sink kept, as a reader of its output sees it (void copies already dropped). */
export interface SinkContents {
  readonly pages: readonly PageRow[];
  readonly sitemaps: readonly SitemapRow[];
  readonly sites: readonly SiteResult[];
}

/** How the suite gets a sink and reads what it kept. */
export interface SiteSinkFactory {
  /** A new sink on an empty store: a fresh run. */
  open(): Promise<SiteSink>;
  /**
   * A sink on the store the last one used, going on with its run (closed with a site's walk still
   * open, as a process stopped mid-run leaves it). Omit for sinks that keep nothing across
   * processes.
   */
  resume?(): Promise<SiteSink>;
  /** What the store holds now for the run, as a reader sees it: committed rows, void copies dropped. */
  read(): Promise<SinkContents>;
}

const SITE_A = 'https://a.example/';
const SITE_B = 'https://b.example/';

function pageRow(site: string, n: number): PageRow {
  const draft = newPageDraft(`${site}p${n}`);
  draft.priority = (n % 10) / 10;
  return { site, sitemap: `${site}sitemap.xml`, ...pageToJSON(draft) };
}

function sitemapRow(site: string): SitemapRow {
  return {
    site,
    url: `${site}sitemap.xml`,
    parent: null,
    type: 'PagesXMLSitemap',
    status: 200,
    notModified: false,
    skipped: false,
    etag: null,
    lastModified: null,
    bytes: 100,
    pages: 2,
    ms: 1,
  };
}

function result(site: string, pages: number): SiteResult {
  return {
    site,
    status: 'ok',
    reason: null,
    pages,
    sitemaps: 1,
    requests: 2,
    notModified: 0,
    skipped: 0,
    bytes: 100,
    ms: 1,
  };
}

/** Writes `n` pages and one sitemap of `site` to an output, each page with its JSON text. */
function fill(output: SiteOutput, site: string, n: number, from = 0): void {
  for (let i = from; i < from + n; i++) {
    const row = pageRow(site, i);
    output.page(row, JSON.stringify(row));
  }
  output.sitemap(sitemapRow(site));
}

/**
 * Rows with every field a page row can carry set (news, images, alternates, extension data,
 * characters JSON escapes), a `changed` and a `removed` one among them.
 */
function richRows(site: string): PageRow[] {
  const sitemap = `${site}news.xml`;
  const full = {
    site,
    sitemap,
    url: `${site}story?q="a"&b=\\c\u00e9\u{1f600}`,
    priority: 0.8,
    lastModified: '2026-01-02T03:04:05Z',
    changeFrequency: 'daily',
    newsStory: {
      title: 'Tab\there, "quoted"\nnext line',
      publishDate: '2026-01-02',
      publicationName: 'The Example',
      publicationLanguage: 'en',
      access: null,
      genres: ['Blog'],
      keywords: ['a', 'b c'],
      stockTickers: [],
    },
    images: [{ loc: `${site}i.png`, caption: 'c\u2028', geoLocation: null, title: null, license: null }],
    alternates: [{ hreflang: 'fr', href: `${site}fr/story` }],
    extensions: { 'x-test': { n: 1, list: [true, null, 2.5] } },
    change: 'changed',
  } as PageRow;
  const plain = { site, sitemap, ...pageToJSON(newPageDraft(`${site}plain`)), change: 'new' } as PageRow;
  const removed: PageRow = { site, sitemap, url: `${site}gone`, change: 'removed' };
  return [full, plain, removed];
}

/**
 * 300 rows as the runner holds them back (plain, `unchanged`), some with characters JSON escapes
 * or that take several UTF-8 bytes, and one `changed` row with every field in the middle.
 */
function heldRows(site: string): PageRow[] {
  const rows: PageRow[] = [];
  for (let i = 0; i < 300; i++) {
    const url = i % 50 === 7 ? `${site}p${i}?q="\u00e9\u{1f600}\u2028"` : `${site}p${i}`;
    const draft = newPageDraft(url);
    draft.priority = (i % 10) / 10;
    rows.push({ site, sitemap: `${site}sitemap.xml`, ...pageToJSON(draft), change: 'unchanged' } as PageRow);
  }
  rows[150] = { ...(richRows(site)[0] as PageRow), url: `${site}p150` };
  return rows;
}

const urls = (c: SinkContents, site?: string) =>
  c.pages
    .filter((p) => site === undefined || p.site === site)
    .map((p) => p.url)
    .sort();
const sites = (c: SinkContents) => c.sites.map((s) => s.site).sort();

/**
 * The contract of `SiteSink` (`@usp-ts/batch`), as every sink must keep it: a site's rows are
 * kept all together at its commit or not at all, `discard` drops them, `saveState` runs inside the
 * commit, a fence refuses a stale copy and a later copy makes the earlier one void, and a resumed
 * sink lists what its run committed. Call it at the top level of a test file.
 */
export function siteSinkSuite(name: string, factory: SiteSinkFactory): void {
  describe(`site sink contract: ${name}`, () => {
    const opened: SiteSink[] = [];
    const open = async (resume = false) => {
      const sink = resume && factory.resume !== undefined ? await factory.resume() : await factory.open();
      opened.push(sink);
      return sink;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close?.();
    });

    it("keeps a site's pages, sitemaps and result row at its commit, each site's rows as they were given", async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      fill(a, SITE_A, 3);
      await a.commit(result(SITE_A, 3));
      const b = sink.begin(SITE_B);
      fill(b, SITE_B, 2);
      await b.commit(result(SITE_B, 2));
      const kept = await factory.read();
      expect(urls(kept, SITE_A)).toEqual([0, 1, 2].map((i) => `${SITE_A}p${i}`));
      expect(urls(kept, SITE_B)).toEqual([0, 1].map((i) => `${SITE_B}p${i}`));
      expect(kept.pages.find((p) => p.url === `${SITE_A}p1`)).toEqual(pageRow(SITE_A, 1));
      expect(kept.sitemaps.filter((s) => s.site === SITE_A)).toEqual([sitemapRow(SITE_A)]);
      expect(kept.sites.find((s) => s.site === SITE_B)).toEqual(result(SITE_B, 2));
    });

    it('keeps every field of a page row, given as an object or, to a sink that takes them, as its JSON text', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      const rows = richRows(SITE_A);
      // A sink that declares `pageLine` gets rows as the runner hands held ones: text alone.
      for (const row of rows) {
        if (a.pageLine !== undefined) a.pageLine(JSON.stringify(row));
        else a.page(row, JSON.stringify(row));
      }
      a.sitemap(sitemapRow(SITE_A));
      await a.commit(result(SITE_A, rows.length));
      const b = sink.begin(SITE_B);
      const objects = richRows(SITE_B);
      for (const row of objects) b.page(row);
      await b.commit(result(SITE_B, objects.length));
      const kept = await factory.read();
      expect(kept.pages.filter((p) => p.site === SITE_A)).toEqual(rows);
      expect(kept.pages.filter((p) => p.site === SITE_B)).toEqual(objects);
    });

    it('keeps rows handed in bulk (`pageLines`) as it keeps them one by one, among single rows', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      const rows = heldRows(SITE_A);
      const [first, second] = [rows.slice(0, 150), rows.slice(151)];
      // The runner hands held rows in blocks only to a sink that takes lines; otherwise line by
      // line, or as objects: the same rows must come out whichever way the sink declares.
      const block = (part: readonly PageRow[]) => {
        if (a.pageLines !== undefined && a.pageLine !== undefined) {
          a.pageLines(Buffer.from(part.map((r) => `${JSON.stringify(r)}\n`).join('')), part.length);
        } else for (const row of part) single(row);
      };
      const single = (row: PageRow) => {
        if (a.pageLine !== undefined) a.pageLine(JSON.stringify(row));
        else a.page(row, JSON.stringify(row));
      };
      block(first);
      single(rows[150] as PageRow);
      block(second);
      a.sitemap(sitemapRow(SITE_A));
      await a.commit(result(SITE_A, rows.length));
      const kept = (await factory.read()).pages.filter((p) => p.site === SITE_A);
      const byUrl = (x: PageRow, y: PageRow) => (x.url < y.url ? -1 : x.url > y.url ? 1 : 0);
      expect([...kept].sort(byUrl)).toEqual([...rows].sort(byUrl));
    });

    it('shows nothing of a site before its commit, and nothing at all after discard', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      fill(a, SITE_A, 5);
      expect(urls(await factory.read())).toEqual([]);
      a.discard();
      const b = sink.begin(SITE_B);
      fill(b, SITE_B, 1);
      await b.commit(result(SITE_B, 1));
      const kept = await factory.read();
      expect(urls(kept, SITE_A)).toEqual([]);
      expect(sites(kept)).toEqual([SITE_B]);
    });

    it('keeps the rows of sites walked at the same time apart', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      const b = sink.begin(SITE_B);
      for (let i = 0; i < 4; i++) {
        a.page(pageRow(SITE_A, i));
        b.page(pageRow(SITE_B, i));
      }
      const done = [b.commit(result(SITE_B, 4)), a.commit(result(SITE_A, 4))];
      await Promise.all(done);
      const kept = await factory.read();
      expect(urls(kept, SITE_A)).toEqual([0, 1, 2, 3].map((i) => `${SITE_A}p${i}`));
      expect(urls(kept, SITE_B)).toEqual([0, 1, 2, 3].map((i) => `${SITE_B}p${i}`));
    });

    it('saves the state once, after the rows are written, with a mark naming the site', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      fill(a, SITE_A, 2);
      const marks: string[] = [];
      await a.commit(result(SITE_A, 2), {
        saveState: async (mark) => {
          marks.push(mark.site);
        },
      });
      expect(marks).toEqual([SITE_A]);
      expect(urls(await factory.read(), SITE_A)).toHaveLength(2);
    });

    it('rejects the commit when the state cannot be saved, saying why, and keeps none of the site', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      fill(a, SITE_A, 1);
      const error = await a
        .commit(result(SITE_A, 1), {
          saveState: async () => {
            throw new Error('state store gone');
          },
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain('state store gone');
      expect(urls(await factory.read(), SITE_A)).toEqual([]);
    });

    it('fences a stale copy: a fence that refuses keeps nothing, saves no state, and the commit rejects with its error', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      fill(a, SITE_A, 3);
      const stale = new Error('lock lost: another worker owns the site');
      let saved = false;
      await expect(
        a.commit(result(SITE_A, 3), {
          fence: async () => {
            throw stale;
          },
          saveState: async () => {
            saved = true;
          },
        }),
      ).rejects.toBe(stale);
      expect(saved).toBe(false);
      const b = sink.begin(SITE_B);
      fill(b, SITE_B, 1);
      await b.commit(result(SITE_B, 1));
      const kept = await factory.read();
      expect(urls(kept, SITE_A)).toEqual([]);
      expect(sites(kept)).toEqual([SITE_B]);
    });

    it('calls the fence once, before the state is saved', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      fill(a, SITE_A, 1);
      const calls: string[] = [];
      await a.commit(result(SITE_A, 1), {
        fence: async () => {
          calls.push('fence');
          return { token: 't-only', voids: [] };
        },
        saveState: async () => {
          calls.push('state');
        },
      });
      expect(calls).toEqual(['fence', 'state']);
    });

    it('keeps one copy of a site walked twice: the later copy makes the earlier one void', async () => {
      const sink = await open();
      const copy = (token: string, voids: string[]): (() => Promise<SiteCopy>) => {
        return async () => ({ token, voids });
      };
      const first = sink.begin(SITE_A);
      fill(first, SITE_A, 3);
      await first.commit(result(SITE_A, 3), { fence: copy('try-1', []) });
      const other = sink.begin(SITE_B);
      fill(other, SITE_B, 2);
      await other.commit(result(SITE_B, 2), { fence: copy('try-b', []) });
      // The second try read one page more: only its rows count.
      const second = sink.begin(SITE_A);
      fill(second, SITE_A, 4);
      await second.commit(result(SITE_A, 4), { fence: copy('try-2', ['try-1']) });
      await sink.close?.();
      const kept = await factory.read();
      expect(urls(kept, SITE_A)).toEqual([0, 1, 2, 3].map((i) => `${SITE_A}p${i}`));
      expect(kept.sites.filter((s) => s.site === SITE_A)).toEqual([result(SITE_A, 4)]);
      expect(urls(kept, SITE_B)).toHaveLength(2);
      expect(sites(kept)).toEqual([SITE_A, SITE_B]);
    });

    // Only for sinks that keep their run across processes.
    if (factory.resume === undefined) return;
    it('resumes its run: the sites committed are done and kept, a site cut off is not', async () => {
      const sink = await open();
      const a = sink.begin(SITE_A);
      fill(a, SITE_A, 2);
      await a.commit(result(SITE_A, 2));
      const cut = sink.begin(SITE_B);
      fill(cut, SITE_B, 3);
      // Stopped here: B never commits.
      await sink.close?.();
      const again = await open(true);
      expect([...(again.done ?? [])]).toEqual([SITE_A]);
      const b = again.begin(SITE_B);
      fill(b, SITE_B, 1);
      await b.commit(result(SITE_B, 1));
      const kept = await factory.read();
      expect(urls(kept, SITE_A)).toHaveLength(2);
      expect(urls(kept, SITE_B)).toEqual([`${SITE_B}p0`]);
      expect(sites(kept)).toEqual([SITE_A, SITE_B]);
    });
  });
}
