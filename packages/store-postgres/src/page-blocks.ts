import type { UnchangedBlocks } from '@usp-ts/batch';
import { field } from './copy-text.js';

/** The columns of a block row's COPY line after its sitemap (`COPY_PAGE_COLUMNS`): url '', seven NULLs, the change. */
const BLOCK_MIDDLE = '\t\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\tunchanged\t';

/**
 * The COPY line (`COPY_PAGE_COLUMNS`, with its newline) of ONE `page_data` row holding a block of
 * rows handed over in bulk (`SiteOutput.pageLines`), when `blocks` (the site's, `utf8`) cuts it
 * (schema 6: `pages`, a json array of each page's `url`, `priority`, `lastModified` and
 * `changeFrequency`; the row's sitemap, `url` '', `change` 'unchanged'; `page_rows` gives each
 * page its row). `null` otherwise (the caller adds the lines one by one).
 */
export function blockCopyLine(text: Buffer, rows: number, blocks: UnchangedBlocks): string | null {
  const block = blocks.cut(text, rows);
  if (block === null) return null;
  return `${field(block.sitemap)}${BLOCK_MIDDLE}${field(block.pages)}\n`;
}
