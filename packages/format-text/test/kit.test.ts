import { describeFormatKit } from '@usp-ts/testkit';
import { plainText } from '../src/index.js';

describeFormatKit({
  name: '@usp-ts/format-text',
  plugins: [plainText()],
  samples: [
    {
      name: 'plain-text sitemap',
      url: 'https://example.com/sitemap.txt',
      input: [
        'https://example.com/',
        '  https://example.com/a?x=1&y=2  ',
        '',
        'not a url',
        'https://example.com/ü',
        'https://example.com/a?x=1&y=2',
        'HTTPS://EXAMPLE.COM/B',
        '/relative',
        'https://example.com/c',
      ].join('\n'),
    },
    {
      name: 'plain-text sitemap with CRLF, CR and Unicode line breaks',
      url: 'https://example.com/urls.txt',
      input:
        'https://example.com/1\r\nhttps://example.com/2\rhttps://example.com/3\u2029https://example.com/4\x1c',
    },
  ],
});
