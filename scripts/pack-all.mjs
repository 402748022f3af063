// `pnpm pack:all [--out DIR]`: every published package's tarball, as `pnpm publish` would upload
// it (workspace ranges rewritten, the root LICENSE copied in), into one folder (default `packs/`),
// to install in a project of your own: `npm install ./packs/*.tgz`. Run `pnpm build` first.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { pnpm, publishedPackages, root } from './workspace-packages.mjs';

const run = promisify(execFile);

/** Packs every published package into `dir`, all at once; each one's tarball and files, by name. */
export async function packAll(dir) {
  mkdirSync(dir, { recursive: true });
  const packs = await Promise.all(
    publishedPackages().map(async (pkg) => {
      const [command, ...args] = pnpm('pack', '--json', '--pack-destination', dir, '--loglevel', 'error');
      const { stdout } = await run(command, args, { cwd: pkg.dir, maxBuffer: 64 * 1024 * 1024 });
      const info = JSON.parse(stdout.slice(stdout.indexOf('{')));
      const files = info.files.map((f) => f.path);
      return [pkg.manifest.name, { tarball: resolve(dir, info.filename), files }];
    }),
  );
  return new Map(packs);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: resolve(root, 'packs') } } });
  const packed = await packAll(resolve(values.out));
  for (const { tarball } of packed.values()) console.log(tarball);
  console.log(`pack:all: ${packed.size} tarballs in ${resolve(values.out)}`);
}
