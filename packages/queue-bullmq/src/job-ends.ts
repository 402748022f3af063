import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** A job that ended for good, as the queue's event stream tells it. */
export type JobEnd =
  | { readonly jobId: string; readonly ok: true; readonly returnvalue: unknown }
  | { readonly jobId: string; readonly ok: false; readonly failedReason: string };

/** A running reader of job ends; `close()` stops it (after the read in progress, if any). */
export interface JobEndReader {
  /** Reads the ends written so far now (after the read in progress, if any). */
  readNow(): Promise<void>;
  close(): Promise<void>;
}

/** Stream entries read per round trip. */
const READ_COUNT = 1_000;

/**
 * KEYS: the event stream. ARGV: the id of the last entry read, entries to read at most. Reads the
 * entries after that id and returns `[last id read, entries read, (1|0, job id, value)…]`: only
 * the jobs that ended, 1 and the return value for `completed`, 0 and the reason for `failed` (the
 * value nil when the entry has none).
 *
 * Why a script: BullMQ writes four events a job (added, waiting, active, completed), and a
 * producer that read them all decoded some thirty strings a job on its own thread to keep one
 * entry in four.
 */
const READ_ENDS_LUA = `
local entries = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', ARGV[2])
local n = #entries
if n == 0 then return {ARGV[1], 0} end
local out = {entries[n][1], n}
for i = 1, n do
  local f = entries[i][2]
  local event, jobId, value = nil, nil, false
  for j = 1, #f - 1, 2 do
    local k = f[j]
    if k == 'event' then event = f[j + 1]
    elseif k == 'jobId' then jobId = f[j + 1]
    elseif k == 'returnvalue' or k == 'failedReason' then value = f[j + 1] end
  end
  if jobId and (event == 'completed' or event == 'failed') then
    out[#out + 1] = event == 'completed' and 1 or 0
    out[#out + 1] = jobId
    out[#out + 1] = value
  end
end
return out
`;

type EndsClient = Redis & {
  uspReadEnds(key: string, from: string, count: number): Promise<(string | number | null)[]>;
};

/**
 * Reads the `completed` and `failed` events of the queue's event stream (the one BullMQ's
 * `QueueEvents` reads) from now on, every `intervalMs`, in batches, and hands each to `onEnd`.
 *
 * Why not `QueueEvents`: it blocks on the stream and wakes up for every event, and BullMQ writes
 * four per job (added, waiting, active, completed); at the pace of real sites each
 * wake-up is a read and a write on the socket, which made the waiting producer's CPU per site
 * (0.8 ms, measured with a worker doing nothing at 27 jobs/s) about twice its cost with the
 * events read in batches. Nothing is lost between reads: the stream keeps the last ~10,000
 * events, and a read is due well before that many are written. The entries are filtered in Redis
 * (`READ_ENDS_LUA`): only the ends cross the socket.
 *
 * Resolves once the starting point is known: a job added after that has its end read.
 */
export async function readJobEnds(
  queue: Queue,
  intervalMs: number,
  onEnd: (end: JobEnd) => void,
): Promise<JobEndReader> {
  const redis = (await queue.getBackend().client) as unknown as Redis;
  if (!('uspReadEnds' in redis)) redis.defineCommand('uspReadEnds', { numberOfKeys: 1, lua: READ_ENDS_LUA });
  const client = redis as EndsClient;
  const key = queue.keys.events;
  const last = await client.xrevrange(key, '+', '-', 'COUNT', 1);
  let from = last[0]?.[0] ?? '0-0';
  let closing = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let reading: Promise<void> = Promise.resolve();

  const readAll = async (): Promise<void> => {
    for (;;) {
      const reply = await client.uspReadEnds(key, from, READ_COUNT);
      from = String(reply[0]);
      for (let i = 2; i + 2 < reply.length; i += 3) {
        const jobId = String(reply[i + 1]);
        const value = reply[i + 2] ?? null;
        if (reply[i] === 1) {
          onEnd({ jobId, ok: true, returnvalue: value === null ? null : JSON.parse(String(value)) });
        } else {
          // BullMQ moves a job to the failed set, with this event, only once it is out of tries.
          onEnd({ jobId, ok: false, failedReason: value === null ? '' : String(value) });
        }
      }
      if (Number(reply[1]) < READ_COUNT) return;
    }
  };
  const tick = (): void => {
    timer = null;
    reading = readAll().then(
      () => {},
      () => {
        // Redis gone for a moment (a restart): the next read goes on from the same entry.
      },
    );
    void reading.then(() => {
      if (!closing) timer = setTimeout(tick, intervalMs);
    });
  };
  timer = setTimeout(tick, intervalMs);

  return {
    async readNow() {
      await reading;
      const now = readAll();
      reading = now.catch(() => {});
      await now;
    },
    async close() {
      if (closing) return;
      closing = true;
      if (timer !== null) clearTimeout(timer);
      await reading;
    },
  };
}
