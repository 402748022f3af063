// Prints a package's API as a Markdown table (name, kind, the doc comment's first sentence), to
// start or refresh the "API" table of its README: node dist/print-table.js ../../packages/core
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportedSymbols } from './index.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: print-table.js PACKAGE_DIR');
const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
  exports: Record<string, { types: string }>;
};
const rows = exportedSymbols(join(dir, manifest.exports['.']?.types ?? 'dist/index.d.ts')).map(
  (e) => `| \`${e.name}\` | ${e.kind} | ${e.summary.replace(/\|/g, '\\\\|')} |`,
);
process.stdout.write(`| name | kind | what it is |\n| --- | --- | --- |\n${rows.join('\n')}\n`);
