#!/usr/bin/env node
// Peak memory of the walk on a large generated site, per page-keeping strategy.
//
//   pnpm turbo run build --filter=usp... && node packages/usp/scripts/tree-memory.mjs [sitemaps] [urlsPerSitemap]
//
// Defaults: 20 gzipped urlsets of 50,000 URLs (1,000,000 URLs, each with lastmod, changefreq and
// priority) behind robots.txt -> one sitemap index, served from a separate process on 127.0.0.1.
// Each mode runs in its own process so peak RSS (getrusage maxrss) is its own.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const self = fileURLToPath(import.meta.url);
const [mode, ...rest] = process.argv.slice(2);

if (mode === '--serve') serve(Number(rest[0]), Number(rest[1]));
else if (mode === '--walk') await walk(rest[0], rest[1]);
else await main(Number(mode ?? 20), Number(rest[0] ?? 50_000));

function urlsetBody(origin, s, n) {
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n',
  ];
  for (let i = 0; i < n; i++) {
    const d = `2024-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`;
    parts.push(
      `<url><loc>${origin}/section-${s}/article-${i}.html</loc><lastmod>${d}T10:${String(i % 60).padStart(2, '0')}:00+00:00</lastmod><changefreq>daily</changefreq><priority>0.${i % 10}</priority></url>\n`,
    );
  }
  parts.push('</urlset>\n');
  return gzipSync(parts.join(''));
}

function serve(sitemaps, perSitemap) {
  const bodies = new Map();
  const server = createServer((req, res) => {
    const origin = `http://127.0.0.1:${server.address().port}`;
    const path = req.url;
    if (path === '/robots.txt') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`User-agent: *\nSitemap: ${origin}/sitemap_index.xml\n`);
      return;
    }
    if (path === '/sitemap_index.xml') {
      res.writeHead(200, { 'Content-Type': 'application/xml' });
      const items = Array.from(
        { length: sitemaps },
        (_, s) => `<sitemap><loc>${origin}/sitemap-${s}.xml.gz</loc></sitemap>`,
      );
      res.end(
        `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${items.join('')}</sitemapindex>`,
      );
      return;
    }
    const m = /^\/sitemap-(\d+)\.xml\.gz$/.exec(path);
    if (m !== null && Number(m[1]) < sitemaps) {
      const s = Number(m[1]);
      if (!bodies.has(s)) bodies.set(s, urlsetBody(origin, s, perSitemap));
      res.writeHead(200, { 'Content-Type': 'application/x-gzip' });
      res.end(bodies.get(s));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/html' });
    res.end('<h1>404</h1>');
  });
  server.listen(0, '127.0.0.1', () => {
    // Warm the bodies so the first walk does not wait on generation.
    const origin = `http://127.0.0.1:${server.address().port}`;
    for (let s = 0; s < sitemaps; s++) bodies.set(s, urlsetBody(origin, s, perSitemap));
    process.stdout.write(`${origin}\n`);
  });
}

async function walk(homepage, how) {
  const usp = await import('../dist/index.js');
  // The script's own knobs: BUFFER_PAGES, CONCURRENCY (streaming), WALK_NODE_ARGS (node flags).
  const webClientOptions = { allowPrivateNetworks: true };
  const warnings = [];
  const onWarning = (w) => {
    if (warnings.length < 3) warnings.push(`${w.code}: ${w.message}`);
  };
  const start = performance.now();
  let pages = 0;
  let sample = 0;
  const heap = () => {
    sample = Math.max(sample, process.memoryUsage().heapUsed);
  };
  const timer = setInterval(heap, 50);
  if (how === 'stream') {
    for await (const _ of usp.walkPages(homepage, {
      webClientOptions,
      useKnownPaths: false,
      onWarning,
      ...(process.env.BUFFER_PAGES ? { bufferPages: Number(process.env.BUFFER_PAGES) } : {}),
      ...(process.env.CONCURRENCY ? { concurrency: Number(process.env.CONCURRENCY) } : {}),
    }))
      pages++;
  } else {
    const pageStore =
      how === 'tree-file'
        ? usp.filePageStore()
        : how === 'tree-memory'
          ? usp.memoryPageStore()
          : usp.countingPageStore();
    const tree = await usp.sitemapTreeForHomepage(homepage, {
      webClientOptions,
      useKnownPaths: false,
      pageStore,
    });
    heap();
    if (how === 'tree-counting') {
      for (const s of tree.allSitemaps()) pages += s.pageCount ?? 0;
    } else {
      // Reading every page back, one sitemap at a time, as allPages() does.
      for (const _ of tree.allPages()) pages++;
    }
  }
  clearInterval(timer);
  heap();
  const ms = performance.now() - start;
  const rssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(
    `${JSON.stringify({ how, pages, seconds: +(ms / 1000).toFixed(2), peakRssMiB: +rssMiB.toFixed(1), peakHeapMiB: +(sample / 1048576).toFixed(1), ...(warnings.length > 0 ? { warnings } : {}) })}\n`,
  );
}

function run(args) {
  // WALK_NODE_ARGS='--max-old-space-size=48' shows the walk fits a small heap (memory is bounded, not just lucky).
  const nodeArgs = (process.env.WALK_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, self, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`${args.join(' ')} exited ${code}`)),
    );
  });
}

async function main(sitemaps, perSitemap) {
  const server = spawn(process.execPath, [self, '--serve', String(sitemaps), String(perSitemap)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const homepage = await new Promise((resolve) =>
    server.stdout.once('data', (d) => resolve(String(d).trim())),
  );
  try {
    console.log(
      `site: ${sitemaps} gzipped urlsets x ${perSitemap} URLs = ${sitemaps * perSitemap} URLs at ${homepage}`,
    );
    for (const how of (process.env.MODES ?? 'stream,tree-counting,tree-file,tree-memory').split(',')) {
      console.log(await run(['--walk', homepage, how]));
    }
  } finally {
    server.kill();
  }
}
