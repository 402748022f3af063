import { createRequire } from 'node:module';

// package.json sits one level above both src/ (tests) and dist/ (published), so one path serves both.
const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

/** This package's version, as published. */
export const VERSION: string = pkg.version;

/** Names the library and its version, with where to read about it, as a polite crawler does. */
export const DEFAULT_USER_AGENT = `usp-ts/${VERSION} (+https://www.npmjs.com/package/usp)`;
