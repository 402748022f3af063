import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeenUrls } from '../src/seen-urls.js';

describe('SeenUrls', () => {
  it('answers like a Set<string> (first add true, repeats false), across growth', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { maxLength: 400 }), (urls) => {
        const seen = new SeenUrls();
        const set = new Set<string>();
        for (const u of urls) {
          const fresh = !set.has(u);
          set.add(u);
          expect(seen.add(u)).toBe(fresh);
        }
        expect(seen.size).toBe(set.size);
      }),
      { seed: 99, numRuns: 200 },
    );
  });

  it('answers like a Set<string> across the move from its first Set into the fingerprint table', () => {
    // The first 1,024 URLs are held in a Set, then moved into the table: repeats of URLs from
    // either side of the move must be found, and only those.
    fc.assert(
      fc.property(
        fc.integer({ min: 900, max: 3000 }),
        fc.array(fc.nat(2999), { minLength: 1, maxLength: 1500 }),
        (distinct, repeats) => {
          const seen = new SeenUrls();
          const set = new Set<string>();
          const url = (i: number) => `https://www.example.com/p/${i}`;
          const check = (u: string) => {
            const fresh = !set.has(u);
            set.add(u);
            expect(seen.add(u), u).toBe(fresh);
          };
          for (let i = 0; i < distinct; i++) {
            check(url(i));
            if (i % 3 === 0) check(url(repeats[i % repeats.length] as number));
          }
          for (const r of repeats) check(url(r));
          expect(seen.size).toBe(set.size);
        },
      ),
      { seed: 37, numRuns: 30 },
    );
  });

  it('keeps 200,000 distinct URLs apart and finds every repeat', () => {
    const seen = new SeenUrls();
    // Counted, not one expect() per URL: 200,000 expect calls took over 30 s on a loaded 2-core CI box.
    let firstAdds = 0;
    for (let i = 0; i < 200_000; i++) if (seen.add(`https://www.example.com/a/${i}`)) firstAdds++;
    let repeatsFound = 0;
    for (let i = 0; i < 200_000; i += 997) if (!seen.add(`https://www.example.com/a/${i}`)) repeatsFound++;
    expect(firstAdds).toBe(200_000);
    expect(repeatsFound).toBe(Math.ceil(200_000 / 997));
    expect(seen.size).toBe(200_000);
  });

  it("holds a sitemap's 50,000 URLs in 512 KiB", () => {
    // A table per document in flight: four of them at the peak of a one-thread `usp ls`.
    const seen = new SeenUrls();
    for (let i = 0; i < 50_000; i++) seen.add(`https://www.example.com/a/${i}`);
    expect(seen.size).toBe(50_000);
    expect(seen.bytes).toBe(512 * 1024);
  });

  it('tells apart URLs that differ in one character, in case or by a trailing slash', () => {
    const seen = new SeenUrls();
    for (const u of [
      'http://a.com/x',
      'http://a.com/y',
      'http://a.com/X',
      'http://a.com/x/',
      'https://a.com/x',
      '',
    ]) {
      expect(seen.add(u)).toBe(true);
    }
  });
});
