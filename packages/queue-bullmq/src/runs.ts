import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

// Runs. The same list enqueued twice (a second producer 2 s after the first, a cron that fired
// twice, a producer restarted after a crash) used to walk every site that had finished in
// between again: completed jobs are removed, so the job id no longer said "done", and the second
// copies were whole rows of their own that no reader rule could drop.
//
// A queue now has one open run at a time: `bull:<queue>:usp-run` holds its id, and
// `bull:<queue>:usp-run:<id>` the sites it finished (job id → result). A producer joins the open
// run (or opens one); a site finished in it is reported with its recorded result and not
// enqueued; a job of a site already finished in its run (added in a race with the first one's
// end) returns the recorded result without walking. The run stays open while producers and
// workers use it, and closes `keepRunMs` after the last of them did (default 1 hour): the next
// day's run of the same list walks every site again. `newRun` opens a fresh run at once.
//
// A worker records a site right after its rows are kept and before BullMQ completes the job; a
// worker killed in between leaves a copy that the job's next try makes void (see copy-claims.ts).

/** The queue's key holding the id of its open run. */
export const RUN_KEY = 'usp-run';

/** How long a run stays open after its last use, unless told otherwise. */
export const DEFAULT_KEEP_RUN_MS = 3_600_000;

/** A run id is safe in a key and in a journal line. */
export const RUN_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * KEYS: run pointer. ARGV: candidate id, keep ms, 1 to replace the open run. Returns the open
 * run's id (the candidate when none was open, or when told to replace it).
 */
const OPEN_RUN_LUA = `
local current = redis.call('GET', KEYS[1])
if current and ARGV[3] ~= '1' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return current
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`;

/**
 * KEYS: run pointer, run table. ARGV: run id, keep ms. Keeps the run open. Returns 1 when the
 * pointer still names this run, 2 when another run was opened since (nothing lost), 0 when the
 * pointer is gone: Redis lost its data (a restart without persistence, a flush), so the caller
 * checks its jobs; the pointer is set again.
 */
const TOUCH_RUN_LUA = `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return 1
end
if current then return 2 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 0
`;

/**
 * KEYS: run table, then job hashes. ARGV: job ids (same order). For each job: its recorded result
 * when the run finished it, else 1 when the job exists, else 0. One round trip for a chunk.
 */
const LOOKUP_LUA = `
local out = {}
for i = 2, #KEYS do
  local done = redis.call('HGET', KEYS[1], ARGV[i - 1])
  if done then out[i - 1] = done
  else out[i - 1] = redis.call('EXISTS', KEYS[i]) end
end
return out
`;

/** KEYS: run pointer, run table. ARGV: job id, result JSON, keep ms. */
const RECORD_LUA = `
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

type RunClient = Redis & {
  uspOpenRun(key: string, id: string, keepMs: number, replace: number): Promise<string>;
  uspTouchRun(pointer: string, table: string, id: string, keepMs: number): Promise<number>;
  uspLookup(keys: number, ...args: string[]): Promise<(string | number)[]>;
  uspRecordDone(pointer: string, table: string, jobId: string, json: string, keepMs: number): Promise<number>;
};

/** What the run functions need of a BullMQ `Queue` or `Worker`. */
export interface QueueKeys {
  getBackend(): { readonly client: Promise<unknown> };
  toKey(type: string): string;
}

async function runClient(on: QueueKeys): Promise<RunClient> {
  const client = (await on.getBackend().client) as unknown as Redis;
  if (!('uspOpenRun' in client)) {
    client.defineCommand('uspOpenRun', { numberOfKeys: 1, lua: OPEN_RUN_LUA });
    client.defineCommand('uspTouchRun', { numberOfKeys: 2, lua: TOUCH_RUN_LUA });
    client.defineCommand('uspLookup', { lua: LOOKUP_LUA });
    client.defineCommand('uspRecordDone', { numberOfKeys: 2, lua: RECORD_LUA });
  }
  return client as RunClient;
}

const tableKey = (on: QueueKeys, run: string) => on.toKey(`${RUN_KEY}:${run}`);

/** Joins the queue's open run, or opens one (always a fresh one with `fresh`). Returns its id. */
export async function openRun(on: QueueKeys, keepMs: number, fresh: boolean): Promise<string> {
  const client = await runClient(on);
  return client.uspOpenRun(on.toKey(RUN_KEY), randomUUID(), keepMs, fresh ? 1 : 0);
}

/** Keeps run `run` open; resolves with `TOUCH_RUN_LUA`'s answer (0: Redis lost its data). */
export async function touchRun(on: QueueKeys, run: string, keepMs: number): Promise<0 | 1 | 2> {
  const client = await runClient(on);
  return (await client.uspTouchRun(on.toKey(RUN_KEY), tableKey(on, run), run, keepMs)) as 0 | 1 | 2;
}

/** What a chunk lookup says of a job: finished in the run (its result), queued, or unknown. */
export type RunLookup = { readonly done: unknown } | 'exists' | 'absent';

/** For each job id: its result when run `run` finished it, else whether the job exists. */
export async function lookupJobs(on: QueueKeys, run: string, ids: readonly string[]): Promise<RunLookup[]> {
  if (ids.length === 0) return [];
  const client = await runClient(on);
  const reply = await client.uspLookup(
    ids.length + 1,
    tableKey(on, run),
    ...ids.map((id) => on.toKey(id)),
    ...ids,
  );
  return reply.map((r) => (typeof r === 'string' ? { done: JSON.parse(r) } : r === 1 ? 'exists' : 'absent'));
}

/** The result run `run` recorded for job `id`, or `undefined`. */
export async function doneInRun(on: QueueKeys, run: string, id: string): Promise<unknown> {
  const client = await runClient(on);
  const json = await client.hget(tableKey(on, run), id);
  return json === null ? undefined : JSON.parse(json);
}

/** Records that run `run` finished job `id` with `result`, and keeps the run open. */
export async function recordDone(
  on: QueueKeys,
  run: string,
  id: string,
  result: unknown,
  keepMs: number,
): Promise<void> {
  const client = await runClient(on);
  await client.uspRecordDone(
    on.toKey(RUN_KEY),
    tableKey(on, run),
    id,
    JSON.stringify(result ?? null),
    keepMs,
  );
}
