// The packed tarballs as a user's project sees them: a scratch project installs every one (from
// the tarballs, the third-party packages from pnpm's store, offline) and type-checks one file
// that imports every entry point, `@usp-ts/core/parse` and `@usp-ts/core/engine` included,
// under the three module resolutions projects use: NodeNext (Node's ESM), bundler, and node10
// (`moduleResolution: "node"`, still common in CommonJS projects, which reads `typesVersions`
// for subpaths).
// `skipLibCheck` is off, so the shipped declarations themselves are checked. Used by
// check-pack.mjs, which packs first.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { CORE, MAIN, pnpm, root } from './workspace-packages.mjs';

const run = promisify(execFile);

/**
 * The resolutions checked, each with the `compilerOptions` a project of that kind writes (a
 * CommonJS project's `tsc --init` turns on `esModuleInterop`), and the packages it leaves out:
 * under node10, `@usp-ts/testkit`, whose fast-check types import a subpath (`pure-rand/types/...`)
 * that only `exports`-aware resolutions find. The README says so.
 */
export const RESOLUTIONS = {
  nodenext: { options: { module: 'nodenext', moduleResolution: 'nodenext' }, without: [] },
  bundler: { options: { module: 'esnext', moduleResolution: 'bundler' }, without: [] },
  node10: {
    options: { module: 'commonjs', moduleResolution: 'node', esModuleInterop: true },
    without: ['@usp-ts/testkit'],
  },
};

/** One file using every package: a namespace import of each, and the calls a README shows. */
function source(names) {
  const imports = names.map((name, i) => `import * as p${i} from '${name}';`);
  return `${imports.join('\n')}
import { rejectUnknownOptions } from '${CORE}/parse';
import { urlKey } from '${CORE}/engine';
import { pageUrls, type SitemapTreeOptions, sitemapTreeForHomepage, walkPages } from '${MAIN}';
import type { Page, Sitemap } from '${CORE}';

export const packages = [${names.map((_, i) => `p${i}`).join(', ')}];
const options: SitemapTreeOptions = { maxPages: 10, webClientOptions: { requestTimeoutMs: 5000 } };
export async function main(): Promise<void> {
  const tree: Sitemap = await sitemapTreeForHomepage('https://www.example.com/', options);
  for (const page of tree.allPages()) {
    const p: Page = page;
    console.log(p.url, p.lastModified?.toISOString());
  }
  for await (const { page, sitemap } of walkPages('https://www.example.com/')) console.log(sitemap.url, page.url);
  const urls: string[] = await pageUrls('https://www.example.com/');
  rejectUnknownOptions({ maxPages: 1 }, { maxPages: true });
  console.log(urlKey('https://www.example.com/'));
  console.log(urls.length);
}
`;
}

/**
 * Installs `packed` (name -> { tarball }) in a scratch project and type-checks under each of
 * `RESOLUTIONS`; returns one line per resolution that failed, with tsc's first errors.
 */
export async function checkResolvers(packed) {
  const dir = mkdtempSync(join(tmpdir(), 'usp-scratch-'));
  try {
    const types = createRequire(join(root, 'package.json'))('@types/node/package.json').version;
    const dependencies = Object.fromEntries(
      [...packed].map(([name, { tarball }]) => [name, `file:${tarball}`]),
    );
    writeFileSync(
      join(dir, 'package.json'),
      `${JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies, devDependencies: { '@types/node': types } }, null, 2)}\n`,
    );
    // The packages name each other at their version: every one is the tarball (pnpm would
    // otherwise look for them on the registry).
    const overrides = Object.entries(dependencies).map(([name, spec]) => `  '${name}': '${spec}'`);
    writeFileSync(join(dir, 'pnpm-workspace.yaml'), `overrides:\n${overrides.join('\n')}\n`);
    // Third-party packages as a user gets them (the newest in range), from the store when it has them.
    const [command, ...args] = pnpm('install', '--prefer-offline', '--ignore-scripts', '--reporter=silent');
    await run(command, args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
    const tsc = join(
      dirname(createRequire(join(root, 'package.json')).resolve('typescript/package.json')),
      'bin',
      'tsc',
    );
    const failures = [];
    for (const [name, { options, without }] of Object.entries(RESOLUTIONS)) {
      const file = `check-${name}.ts`;
      writeFileSync(join(dir, file), source([...packed.keys()].filter((p) => !without.includes(p))));
      const tsconfig = {
        compilerOptions: {
          ...options,
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: [file],
      };
      writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify(tsconfig));
      try {
        await run(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], {
          cwd: dir,
          maxBuffer: 16 * 1024 * 1024,
        });
      } catch (err) {
        const lines = String(err.stdout ?? err.message)
          .trim()
          .split('\n');
        failures.push(
          `${name}: ${lines.length} lines of tsc errors, first: ${lines.slice(0, 3).join(' | ')}`,
        );
      }
    }
    return failures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
