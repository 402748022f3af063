// crawlee's parseSitemap (@crawlee/utils 3.x): sites start from robots.txt's Sitemap lines,
// read with crawlee's own RobotsTxtFile. enqueueStrategy 'all' keeps the pages of the generated
// host (the default, same-hostname, would drop them all since the server is 127.0.0.1).
import { parseSitemap, RobotsTxtFile } from '@crawlee/utils';

async function count(sources) {
  let urls = 0;
  for await (const _item of parseSitemap(sources, undefined, {
    enqueueStrategy: 'all',
    sitemapRetries: 0,
    reportNetworkErrors: true,
  })) {
    urls++;
  }
  return urls;
}

export async function prepare(task) {
  if (task.mode === 'file') return null;
  if (task.mode === 'http') {
    return async () => ({ urls: await count([{ type: 'url', url: task.url }]) });
  }
  return async () => {
    const robots = await RobotsTxtFile.find(`${task.origin}/`);
    const sitemaps = robots.getSitemaps();
    return { urls: await count(sitemaps.map((url) => ({ type: 'url', url }))) };
  };
}
