import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openNdjsonSink, readJournal } from '@usp-ts/batch';
import { afterAll } from 'vitest';
import { type SinkContents, siteSinkSuite } from '../src/index.js';

// The NDJSON sink through the suite, read as its README tells readers to: each file up to the
// journal's offsets, every copy whose token a later line names in `voids` dropped.
const root = mkdtempSync(join(tmpdir(), 'usp-sink-suite-'));
let runs = 0;
let dir = '';
afterAll(() => rmSync(root, { recursive: true, force: true }));

function readRun(): SinkContents {
  const journal = readJournal(join(dir, 'journal.ndjson'));
  const out = { pages: [] as unknown[], sitemaps: [] as unknown[], sites: [] as unknown[] };
  if (journal === null) return out as unknown as SinkContents;
  const voided = new Set(journal.entries.flatMap((e) => e.voids ?? []));
  for (const name of ['pages', 'sitemaps', 'sites'] as const) {
    const path = join(dir, `${name}.ndjson`);
    const bytes = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
    let start = 0;
    for (const entry of journal.entries) {
      const end = entry.offsets[name] ?? start;
      if (entry.token === undefined || !voided.has(entry.token)) {
        const text = bytes.toString('utf8', start, end);
        for (const line of text.split('\n')) if (line !== '') out[name].push(JSON.parse(line));
      }
      start = end;
    }
  }
  return out as unknown as SinkContents;
}

siteSinkSuite('openNdjsonSink', {
  open: () => {
    dir = join(root, `run-${runs++}`);
    return openNdjsonSink({ dir });
  },
  resume: () => openNdjsonSink({ dir, resume: true }),
  read: async () => readRun(),
});
