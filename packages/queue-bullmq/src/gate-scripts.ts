// The Redis side of the per-host politeness gate: three Lua scripts, each atomic on the server.
//
// Keys per host (one hash tag, so a Redis Cluster keeps them in one slot):
//   <prefix>{<host>}:leases  ZSET  lease id → expiry (server ms); an entry past its expiry is a dead
//                                   holder's (worker killed) and is dropped by the next acquire
//   <prefix>{<host>}:next    STRING earliest start of the next request (server ms), Crawl-delay spacing
//   <prefix>{<host>}:delay   STRING the host's Crawl-delay in ms, set by whoever read its robots.txt
//   <prefix>{<host>}:waiting ZSET  process id → when it was last refused a slot: a release publishes a
//                                   wake-up (every process hears each one) only while someone waits
//
// A process that got a host's slots keeps them while it has requests of the host in flight (the
// walk of a site asks again a moment later); an acquire refused because every slot is out
// publishes the host on the "wanted" channel, and a process keeping an idle slot of it gives it back.
//
// A lease id `for:<process id>` in the leases set is a slot reserved for that process: a process
// that served many requests in a row from its slots gives one back *to* the process waiting
// longest, whose next acquire turns the reservation into its lease (it expires if nobody comes).
//
// Time comes from the server (`TIME`), never from the workers, so machines with skewed clocks still
// agree on expiries and spacing. Scripts are replicated by effects (Redis ≥ 5), so `TIME` is allowed.

/**
 * KEYS: leases, next, delay, waiting. ARGV: lease id, perHost, leaseMs, maxWaitMs, process id, slots
 * wanted, "wanted" channel, host.
 * Grants up to the slots wanted (the first lease is the id, the k-th `<id>+k`), at most one while
 * the host has a Crawl-delay. Returns `{n, 0, delay}` when n leases were granted (delay: the host's
 * Crawl-delay, so the holder knows whether it may hand a slot straight to its next request), else
 * `{0, waitMs, delay}`: how long until a retry can succeed (the earliest lease expiry or the next
 * spacing slot), capped at maxWaitMs because a release also wakes waiters through pub/sub. A
 * refusal because every slot is out publishes the host on the "wanted" channel: a process keeping
 * an idle slot of the host gives it back then.
 */
export const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local perHost = tonumber(ARGV[2])
local leaseMs = tonumber(ARGV[3])
local maxWait = tonumber(ARGV[4])
local delay = tonumber(redis.call('GET', KEYS[3]) or '0')
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZREM', KEYS[1], 'for:' .. ARGV[5]) == 1 then
  redis.call('ZADD', KEYS[1], now + leaseMs, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], leaseMs * 2)
  redis.call('ZREM', KEYS[4], ARGV[5])
  return {1, 0, delay}
end
local out = redis.call('ZCARD', KEYS[1])
if out >= perHost then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local wait = tonumber(first[2]) - now
  if wait > maxWait then wait = maxWait end
  if wait < 1 then wait = 1 end
  redis.call('ZADD', KEYS[4], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[4], maxWait + 1000)
  redis.call('PUBLISH', ARGV[7], ARGV[8])
  return {0, wait, delay}
end
local nextAt = tonumber(redis.call('GET', KEYS[2]) or '0')
if nextAt > now then
  local wait = nextAt - now
  if wait > maxWait then wait = maxWait end
  return {0, wait, delay}
end
local n = math.min(tonumber(ARGV[6]), perHost - out)
if delay > 0 then n = 1 end
redis.call('ZADD', KEYS[1], now + leaseMs, ARGV[1])
for k = 2, n do redis.call('ZADD', KEYS[1], now + leaseMs, ARGV[1] .. '+' .. k) end
redis.call('PEXPIRE', KEYS[1], leaseMs * 2)
redis.call('ZREM', KEYS[4], ARGV[5])
if delay > 0 then
  redis.call('SET', KEYS[2], now + delay, 'PX', delay + 1000)
end
return {n, 0, delay}
`;

/**
 * KEYS: leases, waiting. ARGV: wake-up channel, host, process id, maxWaitMs, yield, then the lease
 * ids to drop (one or more: a process gives back every idle lease of a host in one call).
 * Drops the leases; publishes the host on the channel only when a process was refused a slot lately
 * (the wake-up costs every process a message, so it is not sent when nobody waits). With yield
 * `1`, the slot is reserved for the other process that waits longest, if any.
 */
export const RELEASE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local maxWait = tonumber(ARGV[4])
for i = 6, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - maxWait - 1000)
if redis.call('ZCARD', KEYS[2]) == 0 then return 0 end
if ARGV[5] == '1' then
  local first = redis.call('ZRANGE', KEYS[2], 0, 1)
  local to = first[1]
  if to == ARGV[3] then to = first[2] end
  if to then
    redis.call('ZADD', KEYS[1], now + maxWait + 1000, 'for:' .. to)
    redis.call('ZREM', KEYS[2], to)
  end
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
`;

/**
 * KEYS: leases. ARGV: leaseMs, then the lease ids this process holds. Pushes their expiry out by
 * leaseMs (only ids still present: one that already expired stays gone, its slot was handed on).
 * Returns how many were renewed.
 */
export const RENEW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local leaseMs = tonumber(ARGV[1])
local renewed = 0
for i = 2, #ARGV do
  renewed = renewed + redis.call('ZADD', KEYS[1], 'XX', 'CH', now + leaseMs, ARGV[i])
end
if renewed > 0 then redis.call('PEXPIRE', KEYS[1], leaseMs * 2) end
return renewed
`;
