export { googleNews, NEWS_NAMESPACES } from './google-news.js';
