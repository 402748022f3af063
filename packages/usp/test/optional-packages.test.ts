import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadOptionalPackage } from '../src/cli/optional-package.js';

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));
const manifestOf = (dir: string): Manifest =>
  JSON.parse(readFileSync(`${packagesDir}${dir}/package.json`, 'utf8')) as Manifest;
const dirOf = (name: string) => (name === 'usp' ? 'usp' : name.replace('@usp-ts/', ''));

/** What `npm install usp` brings: dependencies, optional dependencies and required peers, followed through. */
function installClosure(): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    if (name !== 'usp' && !name.startsWith('@usp-ts/')) return;
    const m = manifestOf(dirOf(name));
    const required = Object.keys(m.peerDependencies ?? {}).filter(
      (p) => !m.peerDependenciesMeta?.[p]?.optional,
    );
    for (const dep of [
      ...Object.keys(m.dependencies ?? {}),
      ...Object.keys(m.optionalDependencies ?? {}),
      ...required,
    ])
      visit(dep);
  };
  visit('usp');
  return seen;
}

describe('what a plain install of usp brings', () => {
  it('has no native module and no queue client; the batch state store and the queue runner are optional peers', () => {
    const closure = installClosure();
    expect(closure.has('@usp-ts/core')).toBe(true);
    for (const heavy of [
      'better-sqlite3',
      'bullmq',
      'ioredis',
      '@usp-ts/state-sqlite',
      '@usp-ts/queue-bullmq',
      '@usp-ts/store-postgres',
      'pg',
    ])
      expect(closure.has(heavy), heavy).toBe(false);
    const usp = manifestOf('usp');
    expect(usp.peerDependenciesMeta?.['@usp-ts/state-sqlite']?.optional).toBe(true);
    expect(usp.peerDependenciesMeta?.['@usp-ts/queue-bullmq']?.optional).toBe(true);
    expect(usp.peerDependenciesMeta?.['@usp-ts/store-postgres']?.optional).toBe(true);
  });

  it('names the package to install when a command needs a missing optional one', async () => {
    await expect(
      loadOptionalPackage(
        '@usp-ts/not-installed',
        'usp worker',
        () => import('@usp-ts/not-installed' as string),
      ),
    ).rejects.toThrow(
      'usp worker needs the optional package @usp-ts/not-installed: npm install @usp-ts/not-installed',
    );
    // Any other failure passes through unchanged.
    await expect(
      loadOptionalPackage('@usp-ts/not-installed', 'usp worker', () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
  });
});
