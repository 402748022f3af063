import type pg from 'pg';
import { connect } from './connection.js';

/** A site's whole commit as one text (`BEGIN; … COMMIT;`), and the error its own failure gives. */
export interface OneTextCommit {
  readonly text: string;
  readonly failure: (cause: unknown) => Error;
}

interface Waiting {
  readonly commit: OneTextCommit;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** Most sites' transactions in one text. */
const MAX_GROUP = 32;

/**
 * Group commit: the one-text commits of several sites go to the server as one text when they
 * arrive faster than it answers. One text is in flight at a time (on the bench's no-change run,
 * 1,000 commits went as 217 texts; as 729 with a text per connection): a commit that comes while
 * none is goes at once, alone, and the ones that come while a text waits for its answer queue up
 * and go together, each still its own transaction (its own lock, fencing
 * and replacement of an earlier copy). Each answer costs the client a socket write and read,
 * which on a run where little changed were most of what PostgreSQL cost it beyond NDJSON.
 *
 * A text stops at its first failing statement: the transactions before it committed, the failing
 * one is rolled back, the ones after it never ran. The group's sites are then committed again one
 * by one, in order, each text as it was: a site's text is idempotent (it removes the site's copy
 * in the run, its own included, before writing its rows, and its state and mark are upserts), so
 * one that had committed is written again as the same copy, and the failing one fails again,
 * alone, and its error (a fencing refusal, a server error) goes to its own caller only. (One
 * thing is not the same the second time: a state saved without a read of it first, whose base
 * version is looked up in the transaction, finds its own and keeps no version before it. A walk
 * always reads first.)
 */
export class CommitGroups {
  readonly #pool: pg.Pool;
  readonly #where: string;
  readonly #waiting: Waiting[] = [];
  #sending = false;

  constructor(pool: pg.Pool, where: string) {
    this.#pool = pool;
    this.#where = where;
  }

  /** Commits `commit`, alone or with others; rejects with its own `failure` only. */
  commit(commit: OneTextCommit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ commit, resolve, reject });
      if (!this.#sending) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#sending = true;
    try {
      while (this.#waiting.length > 0) await this.#send(this.#waiting.splice(0, MAX_GROUP));
    } finally {
      this.#sending = false;
    }
  }

  async #send(group: Waiting[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await connect(this.#pool, this.#where);
    } catch (error) {
      for (const w of group) w.reject(error as Error);
      return;
    }
    try {
      if (group.length > 1) {
        try {
          await client.query(group.map((w) => w.commit.text).join('\n'));
          for (const w of group) w.resolve();
          return;
        } catch {
          await client.query('ROLLBACK').catch(() => {});
        }
      }
      for (const w of group) await this.#alone(client, w);
    } finally {
      client.release();
    }
  }

  async #alone(client: pg.PoolClient, w: Waiting): Promise<void> {
    try {
      await client.query(w.commit.text);
      w.resolve();
    } catch (cause) {
      await client.query('ROLLBACK').catch(() => {});
      w.reject(w.commit.failure(cause));
    }
  }
}
