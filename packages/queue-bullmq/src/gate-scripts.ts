// The Redis side of the per-host politeness gate: two Lua scripts, each atomic on the server.
//
// Keys per host (one hash tag, so a Redis Cluster keeps them in one slot):
//   <prefix>{<host>}:leases  ZSET  lease id → expiry (server ms); an entry past its expiry is a dead
//                                   holder's (worker killed) and is dropped by the next acquire
//   <prefix>{<host>}:next    STRING earliest start of the next request (server ms), Crawl-delay spacing
//   <prefix>{<host>}:delay   STRING the host's Crawl-delay in ms, set by whoever read its robots.txt
//
// Time comes from the server (`TIME`), never from the workers, so machines with skewed clocks still
// agree on expiries and spacing. Scripts are replicated by effects (Redis ≥ 5), so `TIME` is allowed.

/**
 * KEYS: leases, next, delay. ARGV: lease id, perHost, leaseMs, maxWaitMs.
 * Returns `{1, 0}` when the lease was granted, else `{0, waitMs}`: how long until a retry can
 * succeed (the earliest lease expiry or the next spacing slot), capped at maxWaitMs because a
 * release also wakes waiters through pub/sub.
 */
export const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local perHost = tonumber(ARGV[2])
local leaseMs = tonumber(ARGV[3])
local maxWait = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= perHost then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local wait = tonumber(first[2]) - now
  if wait > maxWait then wait = maxWait end
  if wait < 1 then wait = 1 end
  return {0, wait}
end
local nextAt = tonumber(redis.call('GET', KEYS[2]) or '0')
if nextAt > now then
  local wait = nextAt - now
  if wait > maxWait then wait = maxWait end
  return {0, wait}
end
redis.call('ZADD', KEYS[1], now + leaseMs, ARGV[1])
redis.call('PEXPIRE', KEYS[1], leaseMs * 2)
local delay = tonumber(redis.call('GET', KEYS[3]) or '0')
if delay > 0 then
  redis.call('SET', KEYS[2], now + delay, 'PX', delay + 1000)
end
return {1, 0}
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
