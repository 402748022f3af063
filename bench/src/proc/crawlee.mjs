// crawlee as a user's script would run it on a site: `node crawlee.mjs ORIGIN`. Reads robots.txt
// with crawlee's RobotsTxtFile, streams parseSitemap and prints each page URL, one a line (the
// counterpart of `usp ls -f pages`). The whole process is measured, start-up included.
import { parseSitemap, RobotsTxtFile } from '@crawlee/utils';
import { lineWriter } from './lines.mjs';

const robots = await RobotsTxtFile.find(`${process.argv[2]}/`);
const out = lineWriter();
for await (const item of parseSitemap(
  robots.getSitemaps().map((url) => ({ type: 'url', url })),
  undefined,
  { enqueueStrategy: 'all', sitemapRetries: 0, reportNetworkErrors: true },
)) {
  await out.line(item.loc);
}
await out.flush();
