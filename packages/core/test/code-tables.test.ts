import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The warning and error codes are documented once, in core's README; these tests keep the
// tables, the code types and what the sources of every package emit the same.
const CORE = join(import.meta.dirname, '..');
const PACKAGES = join(CORE, '..');
const README = readFileSync(join(CORE, 'README.md'), 'utf8');

/** The string literals of a union type `name` in a source file. */
function unionMembers(file: string, name: string): string[] {
  const source = readFileSync(join(CORE, 'src', file), 'utf8');
  const body = new RegExp(`export type ${name} =([^;]*);`).exec(source)?.[1];
  if (body === undefined) throw new Error(`no type ${name} in ${file}`);
  return [...body.replace(/\/\/.*$/gm, '').matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
}

/** The first column (a code in backquotes) of the table under `## heading` in the README. */
function tableCodes(heading: string): string[] {
  const start = README.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1] as string);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const CODE = /'([a-z][a-z0-9]*(?:-[a-z0-9]+)*)'/g;

/**
 * The warning codes the sources of every package emit: the code literals in the arguments of a
 * `warn…(`/`invalidNode(`/`notRequested(` call (the walk's, `#`-private or not), in a value typed `WarningCode`, and `code:` in a `Warning` object.
 */
function emittedWarningCodes(): Map<string, string> {
  const found = new Map<string, string>();
  const calls =
    /(?:\bwarn\w*|#warn|#?\binvalidNode|#?\bnotRequested)\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)/g;
  const typed = /: WarningCode = ([^;]*);/g;
  const warningObject = /: Warning = \{[^}]*?code: '([^']+)'/g;
  for (const pkg of readdirSync(PACKAGES)) {
    let files: string[];
    try {
      files = sourceFiles(join(PACKAGES, pkg, 'src'));
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const where = file.slice(PACKAGES.length + 1);
      for (const m of text.matchAll(calls)) {
        // Messages are template literals or sentences: what is left that looks like a code is one.
        const args = (m[1] as string).replace(/`(?:[^`\\]|\\.)*`/g, '');
        for (const c of args.matchAll(CODE)) found.set(c[1] as string, where);
      }
      for (const m of text.matchAll(typed))
        for (const c of (m[1] as string).matchAll(CODE)) found.set(c[1] as string, where);
      for (const m of text.matchAll(warningObject)) found.set(m[1] as string, where);
      // A Warning object literal on its own line (`warning = { code: 'homepage', … }`).
      for (const m of text.matchAll(/warning = \{ code: '([^']+)'/g)) found.set(m[1] as string, where);
    }
  }
  return found;
}

describe('warning codes', () => {
  const known = unionMembers('contract/warning.ts', 'KnownWarningCode');

  it("the README's table lists exactly the KnownWarningCode type", () => {
    expect(tableCodes('Warning codes').sort()).toEqual([...known].sort());
  });

  it('every code the sources emit is in the type, and every code in the type is emitted', () => {
    const emitted = emittedWarningCodes();
    const unknown = [...emitted].filter(([code]) => !known.includes(code)).map(([c, f]) => `${c} (${f})`);
    expect(unknown).toEqual([]);
    expect(known.filter((code) => !emitted.has(code))).toEqual([]);
  });
});

describe('error codes', () => {
  it("the README's error section names every UspErrorCode, and no other", () => {
    const codes = unionMembers('contract/errors.ts', 'UspErrorCode');
    const start = README.indexOf('\n## Errors\n');
    const section = README.slice(start, README.indexOf('\n## ', start + 1));
    const named = new Set([...section.matchAll(/`(USP_[A-Z_]+)`/g)].map((m) => m[1]));
    expect(codes.filter((c) => !named.has(c))).toEqual([]);
    expect([...named].filter((c) => !codes.includes(c as string))).toEqual([]);
  });
});
