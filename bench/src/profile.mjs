// `pnpm --filter usp-bench run profile`: runs our runner under `node --cpu-prof` on the 50k
// urlset (in memory) and the 1M site (in-thread and with workers), and writes the hot spots
// (self time per function) to results/profile.md; also the 1k news sitemap over HTTP (fixed costs). Profiles stay in results/raw/profiles.
//
//   node src/profile.mjs [--quick] [--top N]
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { summariseProfile } from './cpuprofile.mjs';
import { ensureData } from './generate.mjs';
import { startSiteServer } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const benchDir = path.resolve(here, '..');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const top = Number(argv[argv.indexOf('--top') + 1]) || 25;
const profile = quick ? 'quick' : 'full';

function run(task, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--cpu-prof', `--cpu-prof-dir=${dir}`, path.join(here, 'runner.mjs'), JSON.stringify(task)],
      { stdio: ['ignore', 'pipe', 'inherit'], cwd: benchDir },
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) reject(new Error(`no result: ${out.slice(-500)}`));
      else resolve(JSON.parse(line.slice(7)));
    });
  });
}

const manifest = await ensureData(path.join(benchDir, '.data'), profile, console.log);
const dataDir = path.join(benchDir, '.data', profile);
const outRoot = path.join(benchDir, 'results', 'raw', 'profiles');
const sections = [];

async function profileCase(name, title, task) {
  const dir = path.join(outRoot, name);
  const res = await run(task, dir);
  if (!res.ok) throw new Error(`${name}: ${res.error}`);
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const lines = [
    `## ${title}`,
    '',
    `Wall ${(res.wallMs / 1000).toFixed(2)} s, CPU ${(res.cpuMs / 1000).toFixed(2)} s, peak RSS ${(res.maxRssKiB / 1024).toFixed(0)} MiB, ${res.urls} URLs (one profiled run; the profiler adds overhead).`,
    '',
  ];
  // One profile per thread: the main thread's is the largest unless workers parse.
  for (const f of files.sort()) {
    const s = summariseProfile(path.join(dir, f), top);
    lines.push(
      `### ${f} (${s.totalMs.toFixed(0)} ms sampled)`,
      '',
      '| self ms | % | function (file:line) |',
      '| --- | --- | --- |',
    );
    for (const r of s.rows) lines.push(`| ${r.ms.toFixed(0)} | ${r.pct.toFixed(1)} | \`${r.fn}\` |`);
    lines.push('');
  }
  sections.push(lines.join('\n'));
  console.log(`${name}: profiled (${files.length} thread profile${files.length > 1 ? 's' : ''})`);
}

await profileCase(
  'urlset-doc',
  `${manifest.singles.urlset.urls}-URL urlset, one document in memory (parseSitemapDocument)`,
  {
    impl: 'ours',
    mode: 'file',
    dataDir,
    file: manifest.singles.urlset.file,
  },
);
{
  const routes = { '/news.xml': { file: manifest.singles.news.file } };
  const server = await startSiteServer(dataDir, routes);
  try {
    await profileCase(
      'news-http',
      `${manifest.singles.news.urls}-URL news sitemap over HTTP (walkSitemapPages)`,
      {
        impl: 'ours',
        mode: 'http',
        dataDir,
        url: `${server.origin}/news.xml`,
      },
    );
  } finally {
    await server.close();
  }
}
const big = manifest.sites.big;
for (const workers of [0, 2]) {
  const server = await startSiteServer(dataDir, big.routes);
  try {
    await profileCase(
      `site-big-w${workers}`,
      `${big.urls}-URL site streamed with walkPages, ${workers === 0 ? 'parse in-thread' : `${workers} worker threads`}`,
      { impl: 'ours', mode: 'site', dataDir, origin: server.origin, documents: big.documents, workers },
    );
  } finally {
    await server.close();
  }
}

const md = `# CPU profiles of our runner\n\nMade by \`node bench/src/profile.mjs${quick ? ' --quick' : ''}\` (\`node --cpu-prof\`), ${new Date().toISOString().slice(0, 10)}. Self time per function, heaviest first.\n\n${sections.join('\n')}`;
const outFile = quick ? path.join(outRoot, 'profile.md') : path.join(benchDir, 'results', 'profile.md');
writeFileSync(outFile, md);
console.log(`wrote ${outFile}`);
