import {
  type ClosingFile,
  type ClosingMode,
  type ClosingServer,
  compressibleSitemapGz,
  startClosingServer,
} from '@usp-ts/test-server';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

// nodejs/undici#5360 through the CLI: a large gzipped sitemap (50,000 pages, ~60x compressible)
// from a server that closes each connection, read by the walk (which decompresses and parses far
// slower than the bytes arrive). Before the fetcher's guard every run died with undici's
// uncatchable AssertionError, stdout cut mid-list (10 of 10 per mode).

const PAGES = 50_000;
const servers: ClosingServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function site(mode: ClosingMode): Promise<ClosingServer> {
  const files: Record<string, ClosingFile> = {};
  const s = await startClosingServer(mode, files);
  servers.push(s);
  const { gz } = compressibleSitemapGz(s.origin, PAGES);
  files['/robots.txt'] = {
    body: Buffer.from(`Sitemap: ${s.origin}/sitemap.xml.gz\n`),
    contentType: 'text/plain',
  };
  files['/sitemap.xml.gz'] = { body: gz, contentType: 'application/gzip' };
  return s;
}

describe('usp ls on a server that closes the connection after a large gzipped sitemap', () => {
  for (const mode of ['connection-close', 'http1.0', 'http1.0-eof'] as const) {
    it(`${mode}: lists all ${PAGES} pages and exits 0`, async () => {
      const s = await site(mode);
      const r = await runCli(['ls', '-f', 'pages', '--allow-private-networks', '-k', `${s.origin}/`]);
      expect(r.stderr).not.toContain('AssertionError');
      expect(r.code).toBe(0);
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(PAGES);
      expect(lines[PAGES - 1]).toBe(`${s.origin}/products/item-${PAGES - 1}.html`);
    });
  }
});
