import { OpenedResources, startTestServer } from '@usp-ts/test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { collectSiteReport } from '../src/report/site-report.js';
import { robots, sitemapIndex, TEXT, testClient, urlset, XML } from './tree-helpers.js';

const opened = new OpenedResources();
afterEach(() => opened.closeAll());

describe('usp report of a site: each sitemap’s request', () => {
  it('shows the status, body bytes and time the walk reported with each document', async () => {
    let origin = '';
    const pages = () => urlset([`${origin}/p1`, `${origin}/p2`]);
    const server = opened.track(
      await startTestServer({
        '/robots.txt': (_req, res) => {
          res.writeHead(200, TEXT);
          res.end(robots([`${origin}/index.xml`]));
        },
        '/index.xml': (_req, res) => {
          res.writeHead(200, XML);
          res.end(sitemapIndex([`${origin}/a.xml`, `${origin}/old.xml`, `${origin}/gone.xml`]));
        },
        '/a.xml': (_req, res) => {
          res.writeHead(200, XML);
          res.end(pages());
        },
        // Listed again under another URL: the one fetch's figures, not twice.
        '/old.xml': (_req, res) => {
          res.writeHead(301, { location: `${origin}/a.xml` });
          res.end();
        },
      }),
    );
    origin = server.origin;
    const client = opened.track(testClient());
    const data = await collectSiteReport({
      url: `${origin}/`,
      options: { webClient: client, useKnownPaths: false },
    });
    const byUrl = new Map(data.sitemaps.map((s) => [s.url, s]));
    expect(byUrl.get(`${origin}/a.xml`)).toMatchObject({
      status: 200,
      bytes: Buffer.byteLength(pages()),
      pages: 2,
    });
    expect(byUrl.get(`${origin}/a.xml`)?.ms).toBeGreaterThanOrEqual(0);
    expect(byUrl.get(`${origin}/gone.xml`)).toMatchObject({ status: 404, bytes: 0 });
    // The root is the site, not a request.
    expect(data.sitemaps[0]).toMatchObject({ status: null, bytes: null, ms: null });
    const old = data.sitemaps.find((s) => s.url === `${origin}/old.xml`);
    expect(old).toMatchObject({ type: 'InvalidSitemap', status: 200, bytes: 0 });
  });
});
