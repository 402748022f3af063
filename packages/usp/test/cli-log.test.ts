import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Log } from '../src/cli/log.js';

describe('CLI log at the default verbosity', () => {
  it('always shows a warning that means data was lost, and sums up the rest by code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usp-log-'));
    try {
      const file = join(dir, 'log.txt');
      const log = new Log(0, file);
      for (let i = 0; i < 150; i++) log.warning({ code: 'invalid-date', message: `bad date ${i}`, url: 'u' });
      log.warning({ code: 'too-large', message: 'Larger than 52428800 bytes uncompressed', url: 'u' });
      log.warning({ code: 'gzip', message: 'Gzip data is cut or corrupt', url: 'u' });
      log.summary();
      await log.close();
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
      expect(lines.filter((l) => l.includes('[invalid-date]'))).toHaveLength(100);
      expect(lines).toContain('usp: warning: Larger than 52428800 bytes uncompressed [too-large] (u)');
      expect(lines).toContain('usp: warning: Gzip data is cut or corrupt [gzip] (u)');
      expect(lines.at(-1)).toBe('usp: 50 more warnings not shown (50 invalid-date; use -v to see all)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
