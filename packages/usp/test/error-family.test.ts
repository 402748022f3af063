import * as batch from '@usp-ts/batch';
import * as core from '@usp-ts/core';
import { UspError, type UspErrorCode } from '@usp-ts/core';
import * as engine from '@usp-ts/core/engine';
import * as drivers from '@usp-ts/driver-testkit';
import * as image from '@usp-ts/ext-google-image';
import * as news from '@usp-ts/ext-google-news';
import * as video from '@usp-ts/ext-google-video';
import * as fetcher from '@usp-ts/fetcher';
import * as atom from '@usp-ts/format-atom';
import * as robots from '@usp-ts/format-robots';
import * as rss from '@usp-ts/format-rss';
import * as text from '@usp-ts/format-text';
import * as xml from '@usp-ts/format-xml-sitemap';
import * as queue from '@usp-ts/queue-bullmq';
import * as sqlite from '@usp-ts/state-sqlite';
import { startTestServer } from '@usp-ts/test-server';
import * as testkit from '@usp-ts/testkit';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/cli/args.js';
import * as usp from '../src/index.js';

const ENTRIES: Record<string, Record<string, unknown>> = {
  usp,
  '@usp-ts/core': core,
  '@usp-ts/core/engine': engine,
  '@usp-ts/fetcher': fetcher,
  '@usp-ts/batch': batch,
  '@usp-ts/state-sqlite': sqlite,
  '@usp-ts/queue-bullmq': queue,
  '@usp-ts/format-xml-sitemap': xml,
  '@usp-ts/format-robots': robots,
  '@usp-ts/format-text': text,
  '@usp-ts/format-rss': rss,
  '@usp-ts/format-atom': atom,
  '@usp-ts/ext-google-news': news,
  '@usp-ts/ext-google-image': image,
  '@usp-ts/ext-google-video': video,
  '@usp-ts/testkit': testkit,
  '@usp-ts/driver-testkit': drivers,
};

function isErrorClass(value: unknown): value is abstract new (...args: never[]) => Error {
  return typeof value === 'function' && value.prototype instanceof Error;
}

describe('one error family', () => {
  it('every error class a package exports derives from UspError', () => {
    const found: string[] = [];
    const outside: string[] = [];
    for (const [pkg, entry] of Object.entries(ENTRIES)) {
      for (const [name, value] of Object.entries(entry)) {
        if (!isErrorClass(value)) continue;
        found.push(`${pkg}.${name}`);
        if (value !== UspError && !(Object.create(value.prototype) instanceof UspError)) {
          outside.push(`${pkg}.${name}`);
        }
      }
    }
    expect(outside).toEqual([]);
    // The scan saw the classes it is about (an empty scan would pass the check above).
    expect(found).toEqual(
      expect.arrayContaining([
        '@usp-ts/core.InvalidOptionError',
        '@usp-ts/core/engine.GunzipError',
        '@usp-ts/batch.StateStoreError',
        '@usp-ts/fetcher.WebBodyError',
        '@usp-ts/batch.OutputError',
        '@usp-ts/queue-bullmq.JobReleasedError',
        'usp.PluginModuleError',
      ]),
    );
  });

  it('the CLI usage error is one too', () => {
    const e = new UsageError('unknown option --x', 'usage: usp ls <url>');
    expect(e).toBeInstanceOf(UspError);
    expect(e.code).toBe('USP_USAGE');
  });

  it('errors from different packages are told apart by one switch on code', async () => {
    const s = await startTestServer();
    s.route('/big', { body: 'x'.repeat(5000) });
    const client = fetcher.createWebClient({ maxBodyBytes: 100, allowPrivateNetworks: true });
    const caught: unknown[] = [];
    try {
      const res = await client.get(`${s.origin}/big`);
      if (res.kind !== 'ok') throw new Error(`expected a response, got ${res.kind}`);
      try {
        for await (const _ of res.body);
      } catch (e) {
        caught.push(e);
      }
      try {
        core.createRegistry([xml.xmlSitemap(), xml.xmlSitemap()]);
      } catch (e) {
        caught.push(e);
      }
      try {
        const registry = core.createRegistry([]);
        await core.parseDocument({
          url: 'https://example.com/s.xml',
          body: '',
          registry,
          limits: { maxPages: 5 },
        } as never);
      } catch (e) {
        caught.push(e);
      }
    } finally {
      await client.close();
      await s.close();
    }
    const codes = caught.map((e) => {
      expect(e).toBeInstanceOf(UspError);
      const code: UspErrorCode = (e as UspError).code;
      switch (code) {
        case 'USP_TOO_LARGE':
        case 'USP_PLUGIN_CONFLICT':
        case 'USP_INVALID_OPTION':
          return code;
        default:
          return `unexpected ${code}`;
      }
    });
    expect(codes).toEqual(['USP_TOO_LARGE', 'USP_PLUGIN_CONFLICT', 'USP_INVALID_OPTION']);
  });
});
