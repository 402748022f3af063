import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Core's folders are layers (contract, engine, walk): a file that imports, even only a type,
// from a file that imports it back makes two concepts one, and was how the walk came to read
// the raw options. Type-only imports count too.
const srcDir = fileURLToPath(new URL('../src/', import.meta.url));
const IMPORT = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Relative imports of each source file, as source paths. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) =>
      resolve(dirname(file), m[1].replace(/\.js$/, '.ts')),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Every import circle, each as the files on it (first file repeated at the end). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('core/src has no import circles and keeps its layers', () => {
  const graph = importGraph(sourceFiles(srcDir));

  it('reads the sources and their imports', () => {
    expect(graph.size).toBeGreaterThan(30);
    const walk = graph.get(join(srcDir, 'walk', 'walk-state.ts')) ?? [];
    expect(walk).toContain(join(srcDir, 'walk', 'config.ts'));
  });

  it('finds a circle when there is one', () => {
    const a = '/x/a.ts';
    const b = '/x/b.ts';
    const graph = new Map<string, string[]>();
    graph.set(a, [b]).set(b, [a]);
    expect(circles(graph)).toEqual([[a, b, a]]);
  });

  it('imports contract <- engine <- walk, never back up', () => {
    const layer = (file: string): number =>
      ['contract', 'engine', 'walk'].indexOf(relative(srcDir, file).split(/[\\/]/)[0]);
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        if (layer(file) >= 0 && layer(target) > layer(file)) {
          upward.push(`${relative(srcDir, file)} -> ${relative(srcDir, target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('finds none in core', () => {
    const named = circles(graph).map((c) => c.map((f) => relative(srcDir, f)).join(' -> '));
    expect(named).toEqual([]);
  });
});
