import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// No class, function or closure in packages/*/src over MAX_LINES lines: a unit a reader can hold.
// A closure of 400 lines is a class in all but name that neither readers nor tools see inside
// (issue 34). The allow-list is for measured hot paths only, each with its reason, and for units
// being split while this guard was added (named, so they leave the list when they shrink: a unit
// on the list that is back under the limit fails too).
const MAX_LINES = 250;

const ALLOWED: Readonly<Record<string, string>> = {
  // `file:name` → why it may be longer.
};

const ROOT = join(import.meta.dirname, '..', '..', '..');
const PACKAGES = join(ROOT, 'packages');

interface Unit {
  readonly key: string;
  readonly lines: number;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The name of a class, function or closure node, or `null` for any other node. */
function unitName(node: ts.Node, sf: ts.SourceFile, owner: string | null): string | null {
  const within = (name: string) => (owner === null ? name : `${owner}.${name}`);
  if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) return node.name?.text ?? '(class)';
  if (ts.isFunctionDeclaration(node)) return node.name?.text ?? '(function)';
  if (
    ts.isMethodDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isConstructorDeclaration(node)
  ) {
    return within(node.name === undefined ? 'constructor' : node.name.getText(sf));
  }
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) {
      return within(parent.name.getText(sf));
    }
    return within('(closure)');
  }
  return null;
}

/** Every class, function, method and closure of the published packages' sources, with its length. */
function units(): Unit[] {
  const found: Unit[] = [];
  for (const pkg of readdirSync(PACKAGES)) {
    let files: string[];
    try {
      files = sourceFiles(join(PACKAGES, pkg, 'src'));
    } catch {
      continue;
    }
    for (const file of files) {
      const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const where = relative(ROOT, file);
      const line = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
      const visit = (node: ts.Node, owner: string | null): void => {
        const name = unitName(node, sf, owner);
        if (name !== null) {
          found.push({ key: `${where}:${name}`, lines: line(node.getEnd()) - line(node.getStart(sf)) + 1 });
        }
        ts.forEachChild(node, (child) => visit(child, name ?? owner));
      };
      visit(sf, null);
    }
  }
  return found;
}

describe('unit size', () => {
  const all = units();

  it('reads the sources', () => {
    expect(all.length).toBeGreaterThan(500);
    expect(all.some((u) => u.key === 'packages/core/src/walk/walk.ts:Walk')).toBe(true);
  });

  it(`no class, function or closure is over ${MAX_LINES} lines, except the allowed ones`, () => {
    const over = all
      .filter((u) => u.lines > MAX_LINES && !(u.key in ALLOWED))
      .map((u) => `${u.key} (${u.lines} lines)`);
    expect(over).toEqual([]);
  });

  it('every allowed unit exists and is still over the limit (else it leaves the list)', () => {
    const lengths = new Map(all.map((u) => [u.key, u.lines]));
    const stale = Object.keys(ALLOWED).filter((key) => (lengths.get(key) ?? 0) <= MAX_LINES);
    expect(stale).toEqual([]);
  });
});
