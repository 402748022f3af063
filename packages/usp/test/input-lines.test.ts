import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { countSites, inputLines } from '../src/cli/input-lines.js';

// `usp batch` reads its sites file without `readline` (cheaper to load and run); the lines must
// be the ones `readline` gave, whatever falls on the 64 KiB boundaries of its reads.

const dir = mkdtempSync(join(tmpdir(), 'usp-input-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function readlineLines(file: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({
    input: createReadStream(file),
    crlfDelay: Number.POSITIVE_INFINITY,
  })) {
    lines.push(line);
  }
  return lines;
}

async function ours(file: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of inputLines(file)) lines.push(line);
  return lines;
}

const CHUNK = 64 * 1024;
/** `tail` placed so that it starts `offset` bytes before the first 64 KiB boundary. */
const across = (tail: Buffer | string, offset: number): Buffer => {
  const t = Buffer.isBuffer(tail) ? tail : Buffer.from(tail);
  const head = Buffer.from(`${'#'.repeat(CHUNK - offset - 1)}\n`);
  return Buffer.concat([head, t]);
};

const CASES: Record<string, Buffer | string> = {
  empty: '',
  'one line, no final break': 'http://a.example/',
  'LF, CRLF and a lone CR': 'http://a.example/\nhttp://b.example/\r\nhttp://c.example/\rhttp://d.example/\n',
  'blank lines and a final CR': '\n\r\n\r\rhttp://a.example/\r',
  'a byte order mark': '\ufeffhttp://a.example/\n',
  'CRLF cut by the read boundary': across('x\r\nhttp://a.example/\n', 1),
  'CR CR cut by the read boundary': across('x\r\rhttp://a.example/', 1),
  'a CR ending the first read, the file ending there': across('x\r', 1),
  'a multi-byte character cut by the read boundary': across('é€😀\nhttp://b.example/\n', 1),
  'invalid UTF-8': Buffer.from([0x68, 0xff, 0xfe, 0x0a, 0xc3, 0x0a, 0xe2, 0x82, 0x0a]),
  'lines longer than several reads, a CR between them': `${'x'.repeat(3 * CHUNK + 5)}\r${'y'.repeat(2 * CHUNK)}\r\nz`,
  'many lines over several reads': Array.from({ length: 20_000 }, (_, i) => `http://s${i}.example/`).join(
    '\r\n',
  ),
};

describe('inputLines', () => {
  for (const [name, content] of Object.entries(CASES)) {
    it(`gives readline's lines: ${name}`, async () => {
      const file = join(dir, `${name.replace(/\W+/g, '-')}.txt`);
      writeFileSync(file, content);
      const expected = await readlineLines(file);
      expect(await ours(file)).toEqual(expected);
    });
  }

  it('counts the sites of a file: no blank or comment line, no stdin', async () => {
    const file = join(dir, 'count.txt');
    writeFileSync(
      file,
      '# sites\nhttp://a.example/\n\n  \r\n  http://b.example/  \r  # not this\nnot a url\n',
    );
    expect(await countSites(file)).toBe(3);
    expect(await countSites('-')).toBeNull();
  });

  it('fails on a missing file as reading it did', async () => {
    await expect(ours(join(dir, 'missing.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(ours(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});
