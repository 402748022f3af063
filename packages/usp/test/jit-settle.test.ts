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
