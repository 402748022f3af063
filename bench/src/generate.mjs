// Deterministic input generator: fixed-seed PRNG, no network, streaming writes (no file is ever
// held in memory whole). Regenerates only when the manifest is missing or GENERATOR_VERSION changed.
import { once } from 'node:events';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { seededRandom } from '@usp-ts/test-server';

export const GENERATOR_VERSION = 4;
const SEED = 0x5eed_2025;

/**
 * Sizes per profile. `full` is the benchmark; `quick` keeps the same shapes at a fraction
 * of the size so the harness can be smoke-tested in seconds.
 */
export const PROFILES = {
  full: {
    urlset: 50_000,
    image: 10_000,
    news: 1_000,
    bigSiteFiles: 20,
    bigSitePerFile: 50_000,
    // 13 robots.txt entries: 3 indexes (50 + 10 + 5 urlsets) and 10 urlsets: 75 urlsets.
    bbc: {
      indexes: [
        { files: 50, perFile: 40_000 },
        { files: 10, perFile: 30_000 },
        { files: 5, perFile: 20_000 },
      ],
      direct: { files: 10, perFile: 20_000 },
    },
    // Scaling points built from the big site's urlsets (no extra generation).
    scaleSites: [1, 4],
  },
  quick: {
    urlset: 4_000,
    image: 800,
    news: 100,
    bigSiteFiles: 5,
    bigSitePerFile: 4_000,
    bbc: {
      indexes: [
        { files: 5, perFile: 2_000 },
        { files: 2, perFile: 1_500 },
      ],
      direct: { files: 3, perFile: 1_000 },
    },
    scaleSites: [1, 2],
  },
};

// ---------------------------------------------------------------------------------------------
// PRNG and value pools

const WORDS = (
  'world europe africa asia politics business technology science health education entertainment ' +
  'arts sport football cricket tennis rugby formula golf athletics weather climate election economy ' +
  'markets energy transport housing crime justice court police music film television books theatre ' +
  'travel food history nature space ocean wildlife farming royal parliament budget inflation banks ' +
  'jobs schools hospitals doctors nurses weekend live report analysis interview video pictures guide ' +
  'explainer review opinion local london scotland wales ireland england manchester birmingham leeds'
).split(' ');
const SECTIONS = [
  'news',
  'sport',
  'weather',
  'culture',
  'travel',
  'future',
  'worklife',
  'reel',
  'food',
  'iplayer',
];
const CHANGEFREQS = [
  'always',
  'hourly',
  'daily',
  'daily',
  'weekly',
  'weekly',
  'weekly',
  'monthly',
  'yearly',
  'never',
];
const PRIORITIES = ['0.1', '0.2', '0.3', '0.4', '0.5', '0.5', '0.6', '0.7', '0.8', '0.8', '0.9', '1.0'];
const HOST = 'https://www.example.com';

const pick = (rng, list) => list[Math.floor(rng() * list.length)];
const pad2 = (n) => (n < 10 ? `0${n}` : `${n}`);

function randomDate(rng) {
  // 2012-01-01 .. 2025-12-31, seconds resolution.
  const ms = Date.UTC(2012, 0, 1) + Math.floor(rng() * 441_504_000) * 1000;
  const d = new Date(ms);
  const day = `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
  const r = rng();
  if (r < 0.1) return day;
  const time = `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  if (r < 0.3) return `${day}T${time}Z`;
  if (r < 0.4) return `${day}T${time}+01:00`;
  return `${day}T${time}+00:00`;
}

function pageUrl(rng, id) {
  const words = 2 + Math.floor(rng() * 4);
  let slug = pick(rng, WORDS);
  for (let i = 1; i < words; i++) slug += `-${pick(rng, WORDS)}`;
  // The id makes every URL unique across the whole data set (no de-duplication skews counts).
  return `${HOST}/${pick(rng, SECTIONS)}/${slug}-${(10_000_000 + id).toString()}`;
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NS_SITEMAP = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const NS_IMAGE = 'http://www.google.com/schemas/sitemap-image/1.1';
const NS_NEWS = 'http://www.google.com/schemas/sitemap-news/0.9';

function plainEntry(rng, id) {
  return (
    `  <url>\n    <loc>${pageUrl(rng, id)}</loc>\n    <lastmod>${randomDate(rng)}</lastmod>\n` +
    `    <changefreq>${pick(rng, CHANGEFREQS)}</changefreq>\n    <priority>${pick(rng, PRIORITIES)}</priority>\n  </url>\n`
  );
}

function imageEntry(rng, id) {
  const url = pageUrl(rng, id);
  let s = `<url><loc>${url}</loc><lastmod>${randomDate(rng)}</lastmod>`;
  const images = 1 + Math.floor(rng() * 3);
  for (let i = 0; i < images; i++) {
    const w = pick(rng, WORDS);
    s += `<image:image><image:loc>https://images.example.com/${w}/${id}-${i}.jpg</image:loc>`;
    if (rng() < 0.7) s += `<image:caption>A picture of ${w} &amp; ${pick(rng, WORDS)}</image:caption>`;
    if (rng() < 0.5) s += `<image:title>${w} ${pick(rng, WORDS)}</image:title>`;
    s += '</image:image>';
  }
  return `${s}</url>\n`;
}

function newsEntry(rng, id) {
  const words = [pick(rng, WORDS), pick(rng, WORDS), pick(rng, WORDS), pick(rng, WORDS)];
  return (
    `<url><loc>${pageUrl(rng, id)}</loc><news:news><news:publication><news:name>Example News</news:name>` +
    `<news:language>en</news:language></news:publication>` +
    `<news:publication_date>${randomDate(rng)}</news:publication_date>` +
    `<news:title>${words.join(' ')} &amp; more</news:title>` +
    `<news:keywords>${words[0]}, ${words[1]}, ${words[2]}</news:keywords></news:news></url>\n`
  );
}

// ---------------------------------------------------------------------------------------------
// Streaming writers

/** Writes pieces to `file` (gzipped when it ends in .gz), honouring backpressure. */
async function writeStreamed(file, produce) {
  mkdirSync(path.dirname(file), { recursive: true });
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const sink = file.endsWith('.gz') ? createGzip({ level: 6, chunkSize: 1 << 16 }) : out;
  const done = file.endsWith('.gz') ? pipeline(sink, out) : null;
  let buf = '';
  let rawBytes = 0;
  const write = async (s) => {
    buf += s;
    if (buf.length >= 1 << 16) {
      rawBytes += Buffer.byteLength(buf);
      if (!sink.write(buf)) await once(sink, 'drain');
      buf = '';
    }
  };
  await produce(write);
  rawBytes += Buffer.byteLength(buf);
  sink.end(buf);
  if (done) await done;
  else await once(out, 'finish');
  return rawBytes;
}

async function writeUrlset(file, rng, firstId, count, entry, extraNs = '') {
  return writeStreamed(file, async (write) => {
    await write(`${XML_HEAD}<urlset xmlns="${NS_SITEMAP}"${extraNs}>\n`);
    for (let i = 0; i < count; i++) await write(entry(rng, firstId + i));
    await write('</urlset>\n');
  });
}

function indexXml(childPaths, rng) {
  let s = `${XML_HEAD}<sitemapindex xmlns="${NS_SITEMAP}">\n`;
  for (const p of childPaths)
    s += `<sitemap><loc>{{ORIGIN}}${p}</loc><lastmod>${randomDate(rng)}</lastmod></sitemap>\n`;
  return `${s}</sitemapindex>\n`;
}

function robotsTxt(sitemapPaths) {
  let s = 'User-agent: *\nDisallow: /search\nDisallow: /cgi-bin/\nAllow: /\n\n';
  for (const p of sitemapPaths) s += `Sitemap: {{ORIGIN}}${p}\n`;
  return s;
}

async function gzipFile(src, dst) {
  await pipeline(createReadStream(src), createGzip({ level: 6 }), createWriteStream(dst));
}

// ---------------------------------------------------------------------------------------------

/**
 * Makes sure the data set of `profile` exists under `dataDir/<profile>`; returns its manifest.
 * Routes map request paths to files; `template: true` files contain `{{ORIGIN}}` (the server
 * fills in its own origin, so the random port still gives absolute sitemap URLs).
 */
export async function ensureData(dataDir, profileName, log = () => {}) {
  const profile = PROFILES[profileName];
  const dir = path.join(dataDir, profileName);
  const manifestFile = path.join(dir, 'manifest.json');
  if (existsSync(manifestFile)) {
    const m = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (m.version === GENERATOR_VERSION) return m;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  log(`generating ${profileName} inputs in ${dir} (once; version ${GENERATOR_VERSION})`);
  let nextId = 0;
  const take = (n) => {
    const id = nextId;
    nextId += n;
    return id;
  };
  const f = (rel) => path.join(dir, rel);
  const size = async (rel) => (await stat(f(rel))).size;

  // --- single documents
  const singles = {};
  {
    const rng = seededRandom(SEED);
    const raw = await writeUrlset(
      f('single/urlset.xml'),
      rng,
      take(profile.urlset),
      profile.urlset,
      plainEntry,
    );
    await gzipFile(f('single/urlset.xml'), f('single/urlset.xml.gz'));
    singles.urlset = { file: 'single/urlset.xml', urls: profile.urlset, bytes: raw, fileBytes: raw };
    singles.urlsetGz = {
      file: 'single/urlset.xml.gz',
      urls: profile.urlset,
      bytes: raw,
      fileBytes: await size('single/urlset.xml.gz'),
    };
  }
  {
    const rng = seededRandom(SEED + 1);
    const raw = await writeUrlset(
      f('single/image.xml'),
      rng,
      take(profile.image),
      profile.image,
      imageEntry,
      ` xmlns:image="${NS_IMAGE}"`,
    );
    singles.image = { file: 'single/image.xml', urls: profile.image, bytes: raw, fileBytes: raw };
  }
  {
    const rng = seededRandom(SEED + 2);
    const raw = await writeUrlset(
      f('single/news.xml'),
      rng,
      take(profile.news),
      profile.news,
      newsEntry,
      ` xmlns:news="${NS_NEWS}"`,
    );
    singles.news = { file: 'single/news.xml', urls: profile.news, bytes: raw, fileBytes: raw };
  }
  log(`  single documents done (${((Date.now() - started) / 1000).toFixed(1)} s)`);

  // --- the big site: robots.txt -> index -> N gzipped urlsets
  const sites = {};
  const bigFiles = [];
  {
    const rng = seededRandom(SEED + 3);
    for (let i = 1; i <= profile.bigSiteFiles; i++) {
      const rel = `big/sitemaps/sitemap-${pad2(i)}.xml.gz`;
      const raw = await writeUrlset(
        f(rel),
        rng,
        take(profile.bigSitePerFile),
        profile.bigSitePerFile,
        plainEntry,
      );
      bigFiles.push({
        path: `/sitemaps/sitemap-${pad2(i)}.xml.gz`,
        file: rel,
        urls: profile.bigSitePerFile,
        bytes: raw,
      });
    }
    const idxRng = seededRandom(SEED + 4);
    const makeIndexSite = (name, files) => {
      const idxRel = `${name}/sitemap_index.xml`;
      const robotsRel = `${name}/robots.txt`;
      mkdirSync(f(name), { recursive: true });
      writeFileSync(
        f(idxRel),
        indexXml(
          files.map((x) => x.path),
          idxRng,
        ),
      );
      writeFileSync(f(robotsRel), robotsTxt(['/sitemap_index.xml']));
      const routes = {
        '/robots.txt': { file: robotsRel, template: true },
        '/sitemap_index.xml': { file: idxRel, template: true },
      };
      for (const x of files) routes[x.path] = { file: x.file };
      const urls = files.reduce((a, x) => a + x.urls, 0);
      sites[name] = {
        urls,
        bytes: files.reduce((a, x) => a + x.bytes, 0),
        fileBytes: 0,
        urlsets: files.length,
        routes,
        robotsSitemaps: ['/sitemap_index.xml'],
        documents: ['/robots.txt', '/sitemap_index.xml', ...files.map((x) => x.path)],
      };
    };
    for (const n of profile.scaleSites) makeIndexSite(`scale-${n}`, bigFiles.slice(0, n));
    makeIndexSite('big', bigFiles);
  }
  log(`  big site done (${((Date.now() - started) / 1000).toFixed(1)} s)`);

  // --- the BBC-sized site: robots.txt with 13 entries, indexes of urlsets plus direct urlsets
  {
    const rng = seededRandom(SEED + 5);
    const routes = { '/robots.txt': { file: 'bbc/robots.txt', template: true } };
    const robotsSitemaps = [];
    const documents = ['/robots.txt'];
    let urls = 0;
    let bytes = 0;
    let urlsets = 0;
    const addUrlset = async (p, count) => {
      const rel = `bbc${p}`;
      bytes += await writeUrlset(f(rel), rng, take(count), count, plainEntry);
      routes[p] = { file: rel };
      documents.push(p);
      urls += count;
      urlsets++;
    };
    for (const [k, idx] of profile.bbc.indexes.entries()) {
      const idxPath = `/sitemaps/index-${k + 1}.xml`;
      const children = [];
      for (let i = 1; i <= idx.files; i++) children.push(`/sitemaps/index-${k + 1}/part-${pad2(i)}.xml.gz`);
      mkdirSync(f('bbc/sitemaps'), { recursive: true });
      writeFileSync(f(`bbc${idxPath}`), indexXml(children, rng));
      routes[idxPath] = { file: `bbc${idxPath}`, template: true };
      robotsSitemaps.push(idxPath);
      documents.push(idxPath);
      for (const c of children) await addUrlset(c, idx.perFile);
    }
    for (let i = 1; i <= profile.bbc.direct.files; i++) {
      const p = `/sitemaps/direct-${pad2(i)}.xml.gz`;
      robotsSitemaps.push(p);
      await addUrlset(p, profile.bbc.direct.perFile);
    }
    writeFileSync(f('bbc/robots.txt'), robotsTxt(robotsSitemaps));
    sites.bbc = { urls, bytes, fileBytes: 0, urlsets, routes, robotsSitemaps, documents };
  }
  log(`  BBC-sized site done (${((Date.now() - started) / 1000).toFixed(1)} s)`);

  for (const site of Object.values(sites)) {
    for (const r of Object.values(site.routes)) site.fileBytes += (await stat(f(r.file))).size;
  }
  const manifest = { version: GENERATOR_VERSION, profile: profileName, dir, seed: SEED, singles, sites };
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  log(`generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return manifest;
}
