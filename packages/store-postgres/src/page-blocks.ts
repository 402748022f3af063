import type { UnchangedBlocks } from '@usp-ts/batch';

/** The columns of a block row's COPY line after its sitemap (`COPY_PAGE_COLUMNS`): url '', seven NULLs, the change. */
const BLOCK_MIDDLE = '\t\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\tunchanged\t';

/** COPY text's escape of a value without tab, newline or carriage return: its backslashes doubled. */
const escapeBackslashes = (text: string): string =>
  text.includes('\\') ? text.replaceAll('\\', '\\\\') : text;

/** COPY text of a value (NULL never). */
const copyField = (text: string): string =>
  escapeBackslashes(text).replace(/[\t\n\r]/g, (c) => ESCAPES[c] ?? c);
const ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * The COPY line (`COPY_PAGE_COLUMNS`, with its newline) of ONE `page_data` row holding a block of
 * rows handed over in bulk (`SiteOutput.pageLines`), when `blocks` (the site's, `utf8`) cuts it
 * (schema 6: `pages`, a json array of each page's `url`, `priority`, `lastModified` and
 * `changeFrequency`; the row's sitemap, `url` '', `change` 'unchanged'; `page_rows` gives each
 * page its row). `null` otherwise (the caller adds the lines one by one), and for a tab or a
 * carriage return anywhere (no JSON text holds one raw; COPY text would need them escaped).
 */
export function blockCopyLine(text: Buffer, rows: number, blocks: UnchangedBlocks): string | null {
  if (text.includes(9) || text.includes(13)) return null;
  const block = blocks.cut(text, rows);
  if (block === null) return null;
  return `${copyField(block.sitemap)}${BLOCK_MIDDLE}${escapeBackslashes(block.pages)}\n`;
}
