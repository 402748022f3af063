import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

// When is a queue drained? Not when its wait list is empty: a producer may be between two chunks
// of its list (or still reading it), a job may be active on another worker that dies and hands it
// back (stalled), or delayed for a retry. A worker told to exit when idle used to look at the wait
// list alone, the moment it found it empty: started beside its producer it exited before the first
// job was added in 3 of 6 tries, leaving every site waiting. Now a producer holds a lease in Redis
// while it adds jobs, and a worker exits only once the queue has held nothing waiting, delayed or
// active, with no producer adding, for a while (`idleMs`).

/** The queue's sorted set of producers adding jobs now: producer id → lease expiry (server ms). */
export const ADDING_KEY = 'usp-adding';

/** How long a producer's lease lasts unless renewed (it is renewed every third of it). */
const ADDING_LEASE_MS = 15_000;

/**
 * KEYS: the adding set. ARGV: producer id, lease ms (0: remove it; -1: only count). Returns the
 * producers adding now. Time is the server's, so producers and workers with skewed clocks agree.
 */
const ADDING_LUA = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lease = tonumber(ARGV[2])
if lease == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
elseif lease > 0 then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], lease)
end
return redis.call('ZCARD', KEYS[1])
`;

type AddingClient = Redis & { uspAdding(key: string, id: string, leaseMs: number): Promise<number> };

async function addingClient(queue: Queue): Promise<AddingClient> {
  const client = (await queue.getBackend().client) as unknown as Redis;
  if (!('uspAdding' in client)) client.defineCommand('uspAdding', { numberOfKeys: 1, lua: ADDING_LUA });
  return client as AddingClient;
}

/** A producer's lease on "adding jobs"; `end()` gives it back (a killed producer's lapses). */
export interface AddingLease {
  end(): Promise<void>;
}

/** Takes a lease saying that producer `id` is adding jobs to `queue`, renewed until `end()`. */
export async function holdAddingLease(queue: Queue, id: string): Promise<AddingLease> {
  const client = await addingClient(queue);
  const key = queue.toKey(ADDING_KEY);
  await client.uspAdding(key, id, ADDING_LEASE_MS);
  const timer = setInterval(() => {
    client.uspAdding(key, id, ADDING_LEASE_MS).catch(() => {
      // Redis gone for a moment: the next renewal (or the lease's end) sees to it.
    });
  }, ADDING_LEASE_MS / 3);
  timer.unref();
  return {
    async end() {
      clearInterval(timer);
      await client.uspAdding(key, id, 0);
    },
  };
}

/** Whether `queue` holds nothing waiting, delayed or active, and no producer is adding to it. */
export async function queueDrained(queue: Queue): Promise<boolean> {
  const client = await addingClient(queue);
  const [counts, adding] = await Promise.all([
    queue.getJobCounts('wait', 'prioritized', 'delayed', 'waiting-children', 'active'),
    client.uspAdding(queue.toKey(ADDING_KEY), '', -1).catch(() => 1),
  ]);
  return adding === 0 && Object.values(counts).every((n) => n === 0);
}
