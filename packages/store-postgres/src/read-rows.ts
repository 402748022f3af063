import { type PageRow, type PageRowFilter, pageRowOf, pageRowsQuery } from '@usp-ts/batch';
import { connect, createPool, redactUrl } from './connection.js';

export type { PageRowFilter };

/** Rows fetched from the cursor at a time: the export's memory stays at one batch of them. */
const BATCH = 2_000;

/**
 * Streams the page rows of a store's run (`filter`) as `PageRow`s, through a cursor: any number of
 * rows in constant memory. `url` as in `openPostgresStore`.
 */
export async function* readPageRows(
  url: string | undefined,
  filter: PageRowFilter = {},
): AsyncGenerator<PageRow> {
  const where = redactUrl(url);
  const pool = createPool(url, 1);
  pool.on('error', () => {});
  try {
    const client = await connect(pool, where);
    try {
      const { sql, params } = pageRowsQuery(filter, (n) => `$${n}`);
      await client.query('BEGIN READ ONLY');
      await client.query(`DECLARE usp_rows NO SCROLL CURSOR FOR ${sql}`, params);
      for (;;) {
        const r = await client.query(`FETCH ${BATCH} FROM usp_rows`);
        for (const row of r.rows) yield pageRowOf(row);
        if (r.rows.length < BATCH) break;
      }
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}
