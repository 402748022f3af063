import type { Redis } from 'ioredis';
import { bullmq } from './cjs-deps.js';
import { bullConnection, type RedisConnection } from './connection.js';
import { checkQueueName, DEFAULT_QUEUE_NAME } from './site-queue.js';

// Exactly-once across workers. A worker keeps a site's rows only after this script, run on the
// job's lock: it renews the lock (what BullMQ's own extendLock does) and, in the same atomic step,
// adds the try's copy name to the job's `uspCopies` field. The name is a fresh id per try, not the
// lock token: BullMQ hands a slot's token on to the next job the slot takes, so a token names the
// copies of several sites, and voiding it would cut sites walked once. A name already there is an
// earlier try of the same job that got as far as keeping its rows and then never completed the
// job (its worker was killed in between, or its lock lapsed): that copy is void. The script moves
// those tokens to the queue's voided set and returns them, so the new copy names them in its
// journal line (`voids`: the reader's rule, files only) and a restarted worker finds its void
// copies in the set. The field lives in the job's hash, which BullMQ deletes when the job
// completes: nothing grows with the number of sites, and the next run of a site starts afresh.
// It costs no extra round trip: the worker renewed the lock before keeping the rows already.

/**
 * KEYS: lock, stalled, job hash, voided set, carried copies. ARGV: lock token, lock ms, job id,
 * voided set's life in ms, copy name. Returns nil when the lock is not this token's (another worker
 * owns the job), else the names of the earlier copies, space-separated ('' for none): those of
 * earlier tries of this job, and those carried over from an earlier job of the site that failed
 * for good (see `VOID_FAILED_LUA`).
 */
export const CLAIM_COPY_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SREM', KEYS[2], ARGV[3])
local before = redis.call('HGET', KEYS[3], 'uspCopies')
local carried = redis.call('HGET', KEYS[5], ARGV[3])
if carried then
  redis.call('HDEL', KEYS[5], ARGV[3])
  if before then before = carried .. ' ' .. before else before = carried end
end
if before then
  local voids = {}
  for token in string.gmatch(before, '%S+') do
    if token ~= ARGV[5] then
      redis.call('SADD', KEYS[4], token)
      voids[#voids + 1] = token
    end
  end
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
  redis.call('HSET', KEYS[3], 'uspCopies', before .. ' ' .. ARGV[5])
  return table.concat(voids, ' ')
end
redis.call('HSET', KEYS[3], 'uspCopies', ARGV[5])
return ''
`;

// A job that fails for good (out of tries, or stalled more often than BullMQ allows) may have kept
// copies: a try that kept its rows and then threw (its state not saved), or was killed before the
// job was recorded as done. The producer lists the site as failed, so none of its copies counts:
// they join the voided set at once (a worker cuts them from its files at its next start or clean
// exit), and they are carried over to the site's next job, whose first try that keeps a copy names
// them in its `voids` (the reader's rule then drops them, even across runs' directories). Run by
// the worker that failed the job, by a waiting producer when it hears of the failure, and by the
// producer that enqueues the site again before it removes the failed job: whichever comes first
// moves them, the others find nothing.

/**
 * KEYS: job hash, failed set, voided set, carried copies. ARGV: job id, life of both sets in ms.
 * Does nothing unless the job is in the failed set. Returns how many copies it voided.
 */
export const VOID_FAILED_LUA = `
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local copies = redis.call('HGET', KEYS[1], 'uspCopies')
if not copies then return 0 end
local n = 0
for token in string.gmatch(copies, '%S+') do
  redis.call('SADD', KEYS[3], token)
  n = n + 1
end
local carried = redis.call('HGET', KEYS[4], ARGV[1])
if carried then copies = carried .. ' ' .. copies end
redis.call('HSET', KEYS[4], ARGV[1], copies)
redis.call('HDEL', KEYS[1], 'uspCopies')
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('PEXPIRE', KEYS[4], ARGV[2])
return n
`;

/** The queue's key (beside BullMQ's own) holding the tokens of void copies. */
export const VOIDED_KEY = 'usp-voided';

/** The queue's hash (job id → tokens) of the copies a failed job leaves to the site's next job. */
export const CARRIED_KEY = 'usp-carried';

/**
 * How long the voided set (and the carried copies) outlive their last addition: a worker restarted later than this finds
 * no void copy of its own (its files then keep them; the journals' `voids` still name them).
 */
export const VOIDED_TTL_MS = 30 * 24 * 3_600_000;

/** What `voidFailedCopies` needs of a BullMQ `Queue` or `Worker`. */
interface QueueKeys {
  getBackend(): { readonly client: Promise<unknown> };
  toKey(type: string): string;
}

/**
 * Voids the copies of job `id` if it is in the failed set (see `VOID_FAILED_LUA`), through the
 * connection of `on` (the producer's queue or the worker). Returns how many it voided.
 */
export async function voidFailedCopies(on: QueueKeys, id: string): Promise<number> {
  const client = (await on.getBackend().client) as unknown as Redis;
  return (await client.eval(
    VOID_FAILED_LUA,
    4,
    on.toKey(id),
    on.toKey('failed'),
    on.toKey(VOIDED_KEY),
    on.toKey(CARRIED_KEY),
    id,
    VOIDED_TTL_MS,
  )) as number;
}

/** Tokens asked per round trip. */
const LOOKUP_CHUNK = 1_000;

/** Options of `voidedCopies`. */
export interface VoidedCopiesOptions {
  readonly connection: RedisConnection;
  /** Default `usp-sites`. */
  readonly queueName?: string;
}

/**
 * Which of these copy tokens (from a worker's journal) are void: the site was walked again after
 * the copy was written, and the later copy is the one to keep. Pass it as `voidedCopies` to
 * `openNdjsonSink` of `@usp-ts/batch`, which then cuts those copies out of a restarted worker's files.
 */
export async function voidedCopies(
  tokens: readonly string[],
  options: VoidedCopiesOptions,
): Promise<ReadonlySet<string>> {
  const queue = new bullmq.Queue(checkQueueName(options.queueName ?? DEFAULT_QUEUE_NAME), {
    connection: bullConnection(options.connection),
  });
  try {
    const client = (await queue.getBackend().client) as unknown as Redis;
    const key = queue.toKey(VOIDED_KEY);
    const voided = new Set<string>();
    for (let i = 0; i < tokens.length; i += LOOKUP_CHUNK) {
      const chunk = tokens.slice(i, i + LOOKUP_CHUNK);
      const member = (await client.smismember(key, ...chunk)) as number[];
      chunk.forEach((token, k) => {
        if (member[k] === 1) voided.add(token);
      });
    }
    return voided;
  } finally {
    await queue.close();
  }
}
