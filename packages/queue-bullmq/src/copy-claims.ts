import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
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
 * KEYS: lock, stalled, job hash, voided set. ARGV: lock token, lock ms, job id, voided set's life
 * in ms, copy name. Returns nil when the lock is not this token's (another worker owns the job),
 * else the names of the earlier copies, space-separated ('' for none).
 */
export const CLAIM_COPY_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SREM', KEYS[2], ARGV[3])
local before = redis.call('HGET', KEYS[3], 'uspCopies')
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

/** The queue's key (beside BullMQ's own) holding the tokens of void copies. */
export const VOIDED_KEY = 'usp-voided';

/**
 * How long the voided set outlives its last addition: a worker restarted later than this finds
 * no void copy of its own (its files then keep them; the journals' `voids` still name them).
 */
export const VOIDED_TTL_MS = 30 * 24 * 3_600_000;

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
  const queue = new Queue(checkQueueName(options.queueName ?? DEFAULT_QUEUE_NAME), {
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
