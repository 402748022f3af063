import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lastJsonLine, runNode } from '@usp-ts/test-server';
import { describe, expect, it } from 'vitest';

// How V8 compiles sax in a fresh thread is about a fresh process, so it is looked at in a child
// with V8's own traces (printed on stdout).

/** Tests run what users run: the built package. `pnpm test` (turbo) builds it first. */
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`pnpm --filter usp build\` first`);

// A parse worker's start: its first document is a large urlset (sax's `write` gets optimised
// half-way through it), then a second one.
const CHILD = `
const usp = await import(process.argv[1]);
const urls = Array.from({ length: 20000 }, (_, i) =>
  '<url><loc>https://a.example/p' + i + '</loc><lastmod>2024-05-08</lastmod><priority>0.5</priority></url>');
const doc = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + urls.join('') + '</urlset>';
let pages = 0;
for (let i = 0; i < 2; i++) pages += (await usp.parseSitemapDocument(doc)).sitemap.pages.length;
process.stdout.write(JSON.stringify({ pages }) + '\\n');
`;

async function tracedRun() {
  const run = await runNode(
    ['--trace-deopt', '--input-type=module', '--eval', CHILD, pathToFileURL(DIST).href],
    {
      guardMs: 60_000,
    },
  );
  expect(run.code).toBe(0);
  expect(lastJsonLine(run)).toEqual({ pages: 40_000 });
  return run;
}

describe('sax in a fresh thread', () => {
  it('is not thrown away and compiled again when the first document ends or a second parser starts', async () => {
    const run = await tracedRun();
    // V8 drops optimised code that took a field for a constant once the field changes: sax's
    // `closedRoot` at the root's close, its options object with a second parser. core's XML
    // engine makes those fields variable before sax is compiled (engine/xml.ts, settleSax).
    const dropped = run.stdout
      .split('\n')
      .filter((l) =>
        /marking dependent code .*SharedFunctionInfo (write|openTag|closeText|emitNode)>/.test(l),
      );
    expect(dropped).toEqual([]);
  });

  it('keeps the pushes of pages and of open tags compiled: their arrays hold objects from the start', async () => {
    const run = await tracedRun();
    // An array literal starts as an array of small integers; code compiled for arrays of objects
    // is thrown away when it pushes to one ("not a Smi"). core's page batches and sax's tag stack
    // are made as arrays of objects (engine/object-array.ts).
    const dropped = run.stdout
      .split('\n')
      .filter((l) => /reason: not a Smi\).*<JSFunction (page|endEntry|openTag) \(/.test(l));
    expect(dropped).toEqual([]);
  });
});

describe('the temp-file page store’s records', () => {
  it('are written without Buffer’s number methods, which each thread would compile on its own', async () => {
    // Node's `writeDoubleLE`, `writeUInt16LE` and the like are JavaScript functions: hot, each
    // was compiled by the optimising compiler in both threads of `usp ls` (about 7 % of a small
    // site's optimising work). A DataView's stores are compiled into the caller.
    const child = `
const { RecordBuffer } = await import(process.argv[1]);
const { SitemapDate } = await import('@usp-ts/core/parse');
const records = new RecordBuffer(4096);
let bytes = 0;
for (let i = 0; i < 60000; i++) {
  records.appendPlain({
    url: 'https://a.example/p' + i, priority: 0.5, changeFrequency: 'daily',
    lastModified: new SitemapDate(1715158391000 + i, i % 2 === 0 ? 120 : null, 0),
    newsStory: null, images: null, alternates: null,
  });
  if (records.size > 60000) bytes += records.take().length;
}
process.stdout.write(JSON.stringify({ bytes: bytes + records.take().length }) + '\\n');
`;
    const run = await runNode(
      [
        '--trace-opt',
        '--input-type=module',
        '--eval',
        child,
        pathToFileURL(fileURLToPath(new URL('../dist/pages/records.js', import.meta.url))).href,
      ],
      { guardMs: 60_000, cwd: fileURLToPath(new URL('..', import.meta.url)) },
    );
    expect(run.code).toBe(0);
    // 28-byte heads and URLs of 20 to 24 bytes.
    expect(lastJsonLine(run)).toEqual({
      bytes: 60_000 * 28 + 10 * 20 + 90 * 21 + 900 * 22 + 9000 * 23 + 50_000 * 24,
    });
    const compiled = run.stdout
      .split('\n')
      .filter((l) =>
        /completed compiling .*<JSFunction (write|read)(Double|Float|U_Int|UInt|Int|BigInt|BigUInt)\w* /.test(
          l,
        ),
      )
      .map((l) => /<JSFunction ([^ ]+)/.exec(l)?.[1]);
    expect(compiled).toEqual([]);
  });
});
