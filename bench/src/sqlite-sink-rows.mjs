// The SQLite store's sink alone, fed farm-like page rows as the batch hands them: PREFILL rows of
// a first run (`new`), then ROWS rows of a second (`unchanged`, as held rows are), 500 a site,
// each site one commit. For instruction counts of the store's share of a run (callgrind: ROWS
// against ROWS = 0, same PREFILL), and to compare builds: DIST is a build of
// @usp-ts/state-sqlite (its `dist`; a copy elsewhere needs a `node_modules` beside it that
// resolves `@usp-ts/batch` and `better-sqlite3`, e.g. a link to packages/state-sqlite/node_modules).
// MODE: `line` (each row by `pageLine`), `split` (held 250-row blocks split into lines, as the
// runner did before `pageLines`), `bulk` (the blocks by `pageLines`), `held` (as `bulk`, but a
// site's rows in 7 runs of one sitemap each and a block never across two, as a `PageTracker` holds
// them: the form of nearly every row of a run after a few pages were removed).
// Usage: node src/sqlite-sink-rows.mjs DIST ROWS [PREFILL] [line|split|bulk|held]
//   valgrind --tool=callgrind node src/sqlite-sink-rows.mjs DIST 80000 80000 bulk
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [dist, rowsArg, prefillArg = '0', mode = 'line'] = process.argv.slice(2);
const { openSqliteStore } = await import(join(resolve(dist), 'index.js'));
const dir = mkdtempSync(join(tmpdir(), 'usp-sqlite-sink-'));
const file = join(dir, 'rows.sqlite');

/** Sites of 500 rows as `PageTracker` writes plain ones, each as lines and as 250-line blocks. */
function sites(rows, change) {
  const out = [];
  for (let s = 0; s * 500 < rows; s++) {
    const site = `http://site-${s}.farm.test:8080/`;
    const lines = [];
    for (let i = 0; i < 500; i++) {
      lines.push(
        JSON.stringify({
          site,
          sitemap: `${site}sitemap-${mode === 'held' ? Math.floor((i * 7) / 500) : i % 7}.xml`,
          url: `${site}articles/2026/11/some-article-title-number-${s}-${i}.html`,
          priority: 0.5,
          lastModified: '2026-11-28T10:11:12Z',
          changeFrequency: 'daily',
          newsStory: null,
          images: null,
          alternates: null,
          change,
        }),
      );
    }
    const blocks = [];
    for (let i = 0; i < lines.length; ) {
      // `held`: a block ends where its sitemap does.
      const of = Math.floor((i * 7) / 500);
      let j = i + 1;
      while (j < lines.length && j - i < 250 && (mode !== 'held' || Math.floor((j * 7) / 500) === of)) j++;
      const part = lines.slice(i, j);
      blocks.push([Buffer.from(part.map((l) => `${l}\n`).join('')), part.length]);
      i = j;
    }
    out.push({ site, lines, blocks });
  }
  return out;
}

const result = (site) => ({
  site,
  status: 'ok',
  reason: null,
  pages: 500,
  sitemaps: 0,
  requests: 1,
  notModified: 0,
  skipped: 0,
  bytes: 1,
  ms: 1,
});

async function run(list, how) {
  const store = openSqliteStore(file);
  for (const { site, lines, blocks } of list) {
    const out = store.sink.begin(site);
    if (how === 'bulk' || how === 'held') for (const [text, n] of blocks) out.pageLines(text, n);
    else if (how === 'split') {
      for (const [text] of blocks) {
        const held = text.toString('utf8').split('\n');
        held.pop();
        for (const line of held) out.pageLine(line);
      }
    } else for (const line of lines) out.pageLine(line);
    await out.commit(result(site));
  }
  await store.close();
}

const first = sites(Number(prefillArg), 'new');
const second = sites(Number(rowsArg), 'unchanged');
if (first.length > 0) await run(first, 'line');
const cpu = process.cpuUsage();
await run(second, mode);
const used = process.cpuUsage(cpu);
console.log(`${rowsArg} rows (${mode}): CPU ${((used.user + used.system) / 1000).toFixed(0)} ms`);
rmSync(dir, { recursive: true, force: true });
