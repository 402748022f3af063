import { createRequire } from 'node:module';
import type * as Undici from 'undici';
import { describe, expect, it } from 'vitest';
import { undiciCore } from '../src/undici.js';

// The fetcher loads three of undici's own modules instead of its entry (which loads every feature).
// If an undici update moved or changed them, these are no longer the entry's own objects.
describe('the undici parts the fetcher loads', () => {
  it('are the very Agent, buildConnector and request that undici exports', () => {
    const parts = undiciCore();
    const entry = createRequire(import.meta.url)('undici') as typeof Undici;
    expect(parts.Agent).toBe(entry.Agent);
    expect(parts.buildConnector).toBe(entry.buildConnector);
    expect(parts.request).toBe(entry.Dispatcher.prototype.request);
  });
});
