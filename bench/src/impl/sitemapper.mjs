// sitemapper 4.x: one sitemap URL per fetch() (it does not read robots.txt, so sites read the
// Sitemap lines first and fetch each in turn). `fields` asks for the same data the others give.
import Sitemapper from 'sitemapper';
import { httpText, robotsSitemaps } from './common.mjs';

const FIELDS = { loc: true, lastmod: true, changefreq: true, priority: true };

async function fetchOne(url, timeoutMs) {
  const sm = new Sitemapper({ url, timeout: timeoutMs, concurrency: 4, fields: FIELDS });
  const result = await sm.fetch();
  if (result.errors.length > 0) {
    throw new Error(`sitemapper: ${result.errors.length} errors, first: ${result.errors[0].message}`);
  }
  return result.sites.length;
}

export async function prepare(task) {
  if (task.mode === 'file') return null;
  if (task.mode === 'http') return async () => ({ urls: await fetchOne(task.url, task.timeoutMs) });
  return async () => {
    const sitemaps = robotsSitemaps(await httpText(`${task.origin}/robots.txt`));
    let urls = 0;
    for (const s of sitemaps) urls += await fetchOne(s, task.timeoutMs);
    return { urls };
  };
}
