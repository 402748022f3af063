import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoServer, startDemoServer } from '../src/cli/demo-site.js';
import { runCli } from './cli-helpers.js';

/** Debian's Chromium; the tests need it and say so in one line when it is missing. */
const CHROMIUM = process.env.USP_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of each report, kept as test artifacts (not committed). */
const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));

let browser: Browser;
let demo: DemoServer;
let work: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Chromium (apt-get install -y chromium) or set USP_CHROMIUM`,
    );
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Without the background-networking flags Chromium keeps trying hosts a closed network refuses.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  demo = await startDemoServer();
  work = mkdtempSync(join(tmpdir(), 'usp-report-'));
  mkdirSync(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await demo?.close();
});

interface Opened {
  page: Page;
  errors: string[];
  requests: string[];
}

/** Opens a report as a user would, noting console errors and every request it makes. */
async function open(file: string): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(file).href);
  return { page, errors, requests };
}

const text = async (l: Locator): Promise<string> => ((await l.textContent()) ?? '').trim();
const total = (page: Page, id: string) => text(page.locator(`[data-total="${id}"] b`));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('usp report of a site, in Chromium', () => {
  it('shows the walk’s totals, expands the tree, finds a URL and draws its charts, offline', async () => {
    const home = `${demo.origin}/`;
    const file = join(work, 'site.html');
    const made = await runCli(['report', home, '-o', file]);
    expect(made.stderr).toContain(`report written to ${file}`);
    expect(made.code).toBe(0);
    const listed = await runCli(['ls', '-f', 'json', home]);
    const tree = JSON.parse(listed.stdout) as { type: string; pages?: unknown[]; subSitemaps?: unknown[] };
    // The root is the site itself, not a sitemap document.
    let sitemaps = -1;
    let pages = 0;
    const visit = (n: typeof tree): void => {
      sitemaps++;
      pages += n.pages?.length ?? 0;
      for (const c of (n.subSitemaps ?? []) as (typeof tree)[]) visit(c);
    };
    visit(tree);

    const { page, errors, requests } = await open(file);
    expect(await total(page, 'pages')).toBe(String(pages));
    expect(await total(page, 'sitemaps')).toBe(String(sitemaps));

    // The index below robots.txt starts closed; a click opens it and shows its children.
    const index = page.locator(`details.node[data-url="${demo.origin}/sitemap_index.xml"]`);
    const child = index.locator(`details.node[data-url="${demo.origin}/sitemap-products.xml"] > summary`);
    await expect.poll(() => child.isVisible()).toBe(false);
    await index.locator(':scope > summary').click();
    await expect.poll(() => child.isVisible()).toBe(true);
    expect(await text(child)).toContain('PagesXMLSitemap');

    // The search narrows the list to the URLs holding the text.
    await page.fill('#url-search', 'teapot');
    const rows = page.locator('#url-rows tr td:first-child');
    const found = await rows.allInnerTexts();
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((u) => u.includes('teapot'))).toBe(true);
    expect(found).toContain(`${demo.origin}/products/teapot`);

    // changefreq: one bar per protocol value and one for none, labelled so.
    const bars = page.locator('[data-chart="changefreq"] rect.bar');
    expect(await bars.count()).toBe(8);
    const labels = await bars.evaluateAll((els) => els.map((e) => e.getAttribute('data-label')));
    expect(labels).toEqual(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never', 'none']);
    const values = await bars.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
    expect(values.reduce((a, b) => a + b, 0)).toBe(pages);
    expect(await page.locator('[data-chart="lastmod-day"] rect.bar').count()).toBe(60);

    // Warnings grouped by code: the cut-off products sitemap and the missing old sitemap.
    expect(await text(page.locator('#warnings tr[data-code="truncated"] td.n'))).toBe('1');
    expect(await text(page.locator('#warnings tr[data-code="fetch"] td.n'))).toBe('1');

    await page.screenshot({ path: join(ARTIFACTS, 'report-site.png'), fullPage: true });
    expect(errors).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]);
  });

  it('reports one sitemap file on disk, its children listed and not fetched', async () => {
    const doc = join(work, 'index.xml');
    writeFileSync(
      doc,
      '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/a.xml</loc></sitemap></sitemapindex>',
    );
    const file = join(work, 'file.html');
    const made = await runCli(['report', doc, '-o', file]);
    expect(made.code).toBe(0);
    const { page, errors } = await open(file);
    expect(await total(page, 'sitemaps')).toBe('2');
    expect(await text(page.locator('details.node[data-url="https://example.com/a.xml"]'))).toContain(
      'Un-fetched child sitemap',
    );
    expect(errors).toEqual([]);
  });
});

describe('usp report of a batch run, in Chromium', () => {
  it('shows the sites by status and the run’s totals as its files hold them', async () => {
    const sitesFile = join(work, 'sites.txt');
    const dead = `http://127.0.0.1:${await freePort()}/`;
    writeFileSync(sitesFile, `${demo.origin}/\n${dead}\nnot a url\n`);
    const out = join(work, 'batch');
    const ran = await runCli([
      'batch',
      '--out',
      out,
      '--allow-private-networks',
      '--timeout',
      '1500ms',
      '--retries',
      '1',
      sitesFile,
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    const sites = readFileSync(join(out, 'sites.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; pages: number });
    const file = join(work, 'batch.html');
    const made = await runCli(['report', out, '-o', file]);
    expect(made.code, made.stderr).toBe(0);
    expect(statSync(file).size).toBeGreaterThan(1000);

    const { page, errors, requests } = await open(file);
    expect(await total(page, 'sites')).toBe(String(sites.length));
    expect(await total(page, 'pages')).toBe(String(sites.reduce((n, s) => n + s.pages, 0)));
    const bars = page.locator('[data-chart="status"] rect.bar');
    const byLabel = Object.fromEntries(
      await bars.evaluateAll((els) =>
        els.map((e) => [e.getAttribute('data-label'), Number(e.getAttribute('data-value'))]),
      ),
    );
    const expected: Record<string, number> = {};
    for (const s of sites) expected[s.status] = (expected[s.status] ?? 0) + 1;
    expect(byLabel).toEqual(expected);
    expect(await page.locator('#status tbody tr').count()).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: join(ARTIFACTS, 'report-batch.png'), fullPage: true });
    expect(errors).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]);
  });
});
