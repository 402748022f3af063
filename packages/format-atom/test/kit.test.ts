import { describeFormatKit } from '@usp-ts/testkit';
import { atom } from '../src/index.js';

const atom10 = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xml:base="http://example.com/blog/">
  <title>F</title><link rel="self" href="http://example.com/atom.xml"/><updated>2024-01-01T00:00:00Z</updated>
  <entry><title>One</title><link rel="edit" href="1/edit"/><link rel="alternate" href="1"/><published>2023-06-01T00:00:00+02:00</published><media:title>m</media:title></entry>
  <entry><summary>Two</summary><link href="http://example.com/2"/><updated>2024-01-02</updated></entry>
  <entry><title>No link</title></entry>
  <entry><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">X <b>y</b></div></title><link href="/3"/></entry>
  <entry><title>Dup</title><link href="http://example.com/2"/></entry>
</feed>
`;

const atom03 = `<?xml version="1.0" encoding="UTF-8"?>
<a:feed version="0.3" xmlns:a="http://purl.org/atom/ns#">
  <a:title>Old</a:title>
  <a:entry><a:title>One</a:title><a:link rel="alternate" type="text/html" href="http://example.com/o1"/><a:issued>2009-12-17T12:04:56+02:00</a:issued></a:entry>
  <a:entry><a:tagline>Two</a:tagline><a:link rel="alternate" type="text/html" href="http://example.com/o2"/><a:modified>bad date</a:modified></a:entry>
</a:feed>
`;

const bare = '<feed><entry><title>t</title><link href="http://example.com/bare"/></entry></feed>';

describeFormatKit({
  name: '@usp-ts/format-atom',
  plugins: [atom()],
  samples: [
    { name: 'atom 1.0', url: 'http://example.com/atom.xml', input: atom10 },
    { name: 'atom 0.3, prefixed', url: 'http://example.com/atom03.xml', input: atom03 },
    { name: 'no namespace', url: 'http://example.com/bare.xml', input: bare },
  ],
});
