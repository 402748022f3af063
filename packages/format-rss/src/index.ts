export { type RssOptions, rss } from './rss.js';
