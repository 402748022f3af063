import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Core runs in browsers and Workers: its shipped sources may not reach for Node built-ins or
// the Node HTTP client. Tests (which run on Node) are exempt.
const srcDir = fileURLToPath(new URL('../src/', import.meta.url));
const FORBIDDEN = [
  /\bfrom\s*['"](node:[^'"]+)['"]/g,
  /\bimport\s*\(\s*['"](node:[^'"]+)['"]\s*\)/g,
  /\brequire\s*\(\s*['"](node:[^'"]+)['"]\s*\)/g,
  /\bfrom\s*['"](undici(?:\/[^'"]*)?)['"]/g,
  /\bimport\s*\(\s*['"](undici(?:\/[^'"]*)?)['"]\s*\)/g,
  /\brequire\s*\(\s*['"](undici(?:\/[^'"]*)?)['"]\s*\)/g,
  // Bare built-in names, as `from 'fs'` also reaches Node.
  /\bfrom\s*['"](fs|path|zlib|http|https|net|dns|os|url|stream|buffer|crypto|worker_threads|child_process)(?:\/[^'"]*)?['"]/g,
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.[cm]?ts$/.test(entry.name) && !/\.test\.[cm]?ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

describe('core has no Node or undici imports', () => {
  const files = sourceFiles(srcDir);

  it('finds the sources', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((f) => [f.slice(srcDir.length)]))('%s imports nothing from node: or undici', (name) => {
    const source = readFileSync(join(srcDir, name), 'utf8');
    const found: string[] = [];
    for (const pattern of FORBIDDEN) {
      for (const match of source.matchAll(pattern)) found.push(match[1]);
    }
    expect(found).toEqual([]);
  });

  it('catches the forms it looks for', () => {
    const sample = `import x from 'node:fs';\nconst y = await import("undici");\nconst z = require('node:zlib');\nimport w from 'zlib';`;
    const found = FORBIDDEN.flatMap((p) => [...sample.matchAll(p)].map((m) => m[1]));
    expect(found.sort()).toEqual(['node:fs', 'node:zlib', 'undici', 'zlib']);
  });
});
