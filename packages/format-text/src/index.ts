export { type PlainTextOptions, plainText } from './text-format.js';
