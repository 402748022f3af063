import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { InvalidOptionError } from '@usp-ts/core';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisPolitenessGate, redisPolitenessGate } from '../src/redis-gate.js';

let redis: TestRedis;
let admin: Redis;
const gates: RedisPolitenessGate[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});
afterEach(async () => {
  await Promise.all(gates.splice(0).map((g) => g.close()));
  await admin.flushall();
});

function gate(options: Omit<Parameters<typeof redisPolitenessGate>[0], 'connection'> = {}) {
  const g = redisPolitenessGate({ connection: redis.url, ...options });
  gates.push(g);
  return g;
}

/** Lets other promises run for a few turns of the event loop (a request "in flight"), no timer. */
/** Redis's clock in ms: the one lease expiries are measured by. */
async function redisNow(): Promise<number> {
  const [seconds, micros] = await admin.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe('redisPolitenessGate', () => {
  it('never lets more than perHost requests to one host run at once, across processes', async () => {
    // Three gates = three processes sharing one Redis.
    const shared = [gate({ perHost: 2 }), gate({ perHost: 2 }), gate({ perHost: 2 })];
    let inFlight = 0;
    let peak = 0;
    // The first request in holds its slot until a second one is in: the other slot is free, so one
    // of the asks out gets it. Holding for a few turns only, as before, assumed that Redis answers
    // the second ask within them; on a loaded machine it may answer after the first has ended, and
    // the peak was 1 (1 run in 20 at load 8).
    let second!: () => void;
    const twoIn = new Promise<void>((resolve) => {
      second = resolve;
    });
    let first = true;
    const request = async (i: number) => {
      const release = await shared[i % 3].acquire('a.example');
      inFlight++;
      peak = Math.max(peak, inFlight);
      if (inFlight === 2) second();
      if (first) {
        first = false;
        await twoIn;
      } else await turns(5 + (i % 7));
      inFlight--;
      release();
    };
    await Promise.all(Array.from({ length: 30 }, (_, i) => request(i)));
    expect(peak).toBe(2);
    // A slot stays a moment with its process after its last request; closing gives it back.
    await Promise.all(shared.map((g) => g.close()));
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(0);
  });

  it('a full host does not hold up another host', async () => {
    const g = gate({ perHost: 1 });
    const releaseA = await g.acquire('a.example');
    const aborted = new AbortController();
    const secondA = g.acquire('a.example', aborted.signal);
    const releaseB = await g.acquire('b.example');
    releaseB();
    aborted.abort(new Error('gave up'));
    await expect(secondA).rejects.toThrow('gave up');
    releaseA();
  });

  it('a waiter is woken by a release in another process', async () => {
    const one = gate({ perHost: 1, maxWaitMs: 60_000 });
    const two = gate({ perHost: 1, maxWaitMs: 60_000 });
    const release = await one.acquire('a.example');
    let granted = false;
    const waiting = two.acquire('a.example').then((r) => {
      granted = true;
      return r;
    });
    await turns(20);
    expect(granted).toBe(false);
    release();
    // With maxWaitMs at a minute, only the pub/sub wake-up can grant this before the test times out.
    (await waiting)();
    expect(granted).toBe(true);
  });

  it("a killed holder's lease expires and its slot comes back", async () => {
    // What a worker killed with -9 leaves: a lease nobody renews (expiry 300 ms from now, server time).
    const [seconds, micros] = await admin.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await admin.zadd('usp:gate:{a.example}:leases', String(now + 300), 'dead-worker.1');
    const g = gate({ perHost: 1, maxWaitMs: 60_000 });
    const release = await g.acquire('a.example');
    // Granted only once the lease expired, by Redis's clock (the one the gate uses): measured there,
    // it holds however long this process was kept waiting between the two calls.
    expect(await redisNow()).toBeGreaterThanOrEqual(now + 300);
    expect(await admin.zrange('usp:gate:{a.example}:leases', '0', '-1')).not.toContain('dead-worker.1');
    release();
  });

  it('a live holder renews its lease past leaseMs, so nobody else gets in', async () => {
    const leases = 'usp:gate:{a.example}:leases';
    // Each renewal of the lease is a ZADD on its key: counted as Redis reports them, no clock here.
    await admin.config('SET', 'notify-keyspace-events', 'Kz');
    const watcher = admin.duplicate();
    try {
      let renewals = 0;
      let renewed: (() => void) | null = null;
      watcher.on('message', () => {
        renewals++;
        renewed?.();
      });
      await watcher.subscribe(`__keyspace@0__:${leases}`);
      const holder = gate({ perHost: 1, leaseMs: 300 });
      const other = gate({ perHost: 1, leaseMs: 300, maxWaitMs: 60_000 });
      const release = await holder.acquire('a.example');
      const [lease] = await admin.zrange(leases, '0', '-1');
      const expiry = Number(await admin.zscore(leases, lease));
      // Refused now; asks again only when woken by a release (maxWaitMs is a minute).
      let granted = false;
      const waiting = other.acquire('a.example').then((r) => {
        granted = true;
        return r;
      });
      // Past three lifetimes of the lease, renewed every third of one (the grant was the first ZADD).
      while (renewals < 10) {
        await new Promise<void>((resolve) => {
          renewed = resolve;
        });
      }
      expect(Number(await admin.zscore(leases, lease))).toBeGreaterThan(expiry + 600);
      expect(granted).toBe(false);
      expect(await admin.zrange(leases, '0', '-1')).toEqual([lease]);
      release();
      (await waiting)();
    } finally {
      watcher.disconnect();
      await admin.config('SET', 'notify-keyspace-events', '');
    }
  });

  it('spaces request starts to a host by its Crawl-delay, across processes', async () => {
    const one = gate({ perHost: 4 });
    const two = gate({ perHost: 4 });
    await one.setCrawlDelay('slow.example', 120);
    const starts: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const release = await (i % 2 === 0 ? one : two).acquire('slow.example');
        starts.push(performance.now());
        release();
      }),
    );
    starts.sort((a, b) => a - b);
    // Spaced by Redis's clock and seen here a reply later, so the i-th start is at least i delays
    // after the first ask (gaps between two starts seen here may shrink when a reply is late; a
    // loaded machine only makes these later). 2 ms for the server clock's rounding.
    for (const [i, start] of starts.entries()) expect(start - t0).toBeGreaterThanOrEqual(i * 120 - 2);
    // Another host is not spaced: slow.example's next start is 10 s away (the longest delay honoured).
    await one.setCrawlDelay('slow.example', 10_000);
    (await one.acquire('slow.example'))();
    const t = performance.now();
    (await one.acquire('fast.example'))();
    (await two.acquire('fast.example'))();
    expect(performance.now() - t).toBeLessThan(5_000);
    await one.setCrawlDelay('slow.example', 0);
    expect(await admin.exists('usp:gate:{slow.example}:delay')).toBe(0);
  });

  it('caps a Crawl-delay at maxCrawlDelayMs', async () => {
    const g = gate({ maxCrawlDelayMs: 150 });
    await g.setCrawlDelay('slow.example', 3_600_000);
    expect(await admin.get('usp:gate:{slow.example}:delay')).toBe('150');
  });

  it('an aborted waiter gives up without keeping a lease', async () => {
    const g = gate({ perHost: 1 });
    const release = await g.acquire('a.example');
    const controller = new AbortController();
    const waiting = g.acquire('a.example', controller.signal);
    controller.abort(new Error('site deadline'));
    await expect(waiting).rejects.toThrow('site deadline');
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(1);
    release();
    await expect(g.acquire('a.example', AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });

  it('close() gives back the leases still held', async () => {
    const leaving = redisPolitenessGate({ connection: redis.url, perHost: 1, leaseMs: 60_000 });
    await leaving.acquire('a.example');
    await leaving.close();
    const g = gate({ perHost: 1, maxWaitMs: 60_000 });
    (await g.acquire('a.example'))();
  });

  /** How often Redis ran a command since the last `CONFIG RESETSTAT` (scripts' inner calls included). */
  async function calls(command: string): Promise<number> {
    const text = await admin.info('commandstats');
    return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  }

  it('hands a slot from one request of a process to its next for the same host, without asking Redis', async () => {
    const g = gate({ perHost: 2 });
    (await g.acquire('warm.example'))(); // scripts loaded, subscribed
    await admin.config('RESETSTAT');
    let inFlight = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const release = await g.acquire('a.example');
        inFlight++;
        peak = Math.max(peak, inFlight);
        await turns(3 + (i % 4));
        inFlight--;
        release();
      }),
    );
    expect(peak).toBeLessThanOrEqual(2);
    // Both leases taken in one ask and given back in one call (at close): two scripts, where a
    // round trip per request and per release used to be (26 and more).
    const more = g.acquire('a.example'); // right after: the kept slot serves it
    (await more)();
    await g.close();
    expect(await calls('evalsha')).toBe(2);
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(0);
  });

  it('a request that finds a slot kept idle takes it at once, with no waiter and no abort listener', async () => {
    const g = gate({ perHost: 2 });
    const controller = new AbortController();
    const signal = controller.signal;
    let listeners = 0;
    const add = signal.addEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners++;
      add(...args);
    }) as AbortSignal['addEventListener'];
    const first = await g.acquire('a.example', signal); // from Redis: both slots, one kept idle
    expect(listeners).toBe(1);
    listeners = 0;
    const second = await g.acquire('a.example', signal); // the kept one
    expect(listeners).toBe(0);
    // Both slots are in use: the next request waits for one, whichever way it comes.
    let third: (() => void) | null = null;
    const waiting = g.acquire('a.example', signal).then((release) => {
      third = release;
    });
    await turns(5);
    expect(third).toBeNull();
    second();
    await waiting;
    first();
    // Ended requests leave their slots idle: the next request takes one at once again.
    listeners = 0;
    const fourth = await g.acquire('a.example', signal);
    expect(listeners).toBe(0);
    third!();
    fourth();
    await g.close();
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(0);
  });

  it("gives a host's slots that fell idle together back to Redis in one call", async () => {
    const g = gate({ perHost: 2 });
    (await g.acquire('warm.example'))();
    await admin.config('RESETSTAT');
    const [a, b] = await Promise.all([g.acquire('a.example'), g.acquire('a.example')]);
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(2);
    a();
    b();
    // Kept a moment for a next request of the walk, then given back (no clock: each turn is a round trip).
    while ((await admin.zcard('usp:gate:{a.example}:leases')) > 0) await turns(1);
    // One ask for both slots and one release, where each slot used to be asked for and to go
    // back on its own (four).
    expect(await calls('evalsha')).toBe(2);
    // Both slots are free for another process.
    const other = gate({ perHost: 2, maxWaitMs: 60_000 });
    const [c, d] = await Promise.all([other.acquire('a.example'), other.acquire('a.example')]);
    c();
    d();
  });

  it('publishes a wake-up on release only when some process waits', async () => {
    const one = gate({ perHost: 1, maxWaitMs: 60_000 });
    const two = gate({ perHost: 1, maxWaitMs: 60_000 });
    (await one.acquire('warm.example'))();
    await admin.config('RESETSTAT');
    for (let i = 0; i < 5; i++) (await two.acquire(`h${i}.example`))();
    await two.close(); // gives back what it kept
    expect(await calls('publish')).toBe(0);
    const held = await one.acquire('a.example');
    const three = gate({ perHost: 1, maxWaitMs: 60_000 });
    const waiting = three.acquire('a.example');
    // Until Redis has refused it (no clock: each turn is a round trip).
    while ((await admin.zcard('usp:gate:{a.example}:waiting')) === 0) await turns(1);
    held();
    await one.close(); // the kept slot goes back now, and wakes the waiter (maxWaitMs is a minute)
    (await waiting)();
    // The refusal said the host is wanted, the release woke the waiter.
    expect(await calls('publish')).toBe(2);
  });

  it("gives slots idle since a while back with the process's next ask, in one read of Redis", async () => {
    // keepIdleMs 0: the idle slots are due back at once, so the test need not wait out the 50 ms.
    const g = gate({ perHost: 2, keepIdleMs: 0 });
    (await g.acquire('warm.example'))();
    // Both scripts run once (ioredis checks a script is loaded before its first use in a pipeline).
    while ((await admin.zcard('usp:gate:{warm.example}:leases')) > 0) await turns(1);
    const [a, b] = await Promise.all([g.acquire('a.example'), g.acquire('a.example')]);
    const reads = async () => Number(/^total_reads_processed:(\d+)/m.exec(await admin.info('stats'))?.[1]);
    const before = await reads();
    a();
    b();
    // Kept idle, no Redis call of their own; they go back with the next ask.
    (await g.acquire('b.example'))();
    // The release and the ask came in one write (one read of Redis, and INFO's own): a release on
    // its own timer woke the process for a write and again for its reply.
    expect((await reads()) - before).toBe(2);
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(0);
  });

  it("keeps a host's slots while the walk has a request of it in flight: one acquire and one release", async () => {
    const g = gate({ perHost: 2 });
    (await g.acquire('warm.example'))();
    await admin.config('RESETSTAT');
    // A walk: robots.txt alone, then two sitemaps at once, then one more (each a few turns).
    const request = async () => {
      const release = await g.acquire('a.example');
      await turns(3);
      release();
    };
    const robots = await g.acquire('a.example');
    // The first ask took both slots: the second is kept for the walk's next request.
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(2);
    await turns(3);
    robots();
    await Promise.all([request(), request()]);
    await request();
    while ((await admin.zcard('usp:gate:{a.example}:leases')) > 0) await turns(1);
    expect(await calls('evalsha')).toBe(2);
  });

  it('gives a slot it keeps idle to another process refused one, before its own request ends', async () => {
    const one = gate({ perHost: 2 });
    const two = gate({ perHost: 2, maxWaitMs: 60_000 });
    (await two.acquire('warm.example'))(); // subscribed
    const busy = await one.acquire('a.example'); // both slots out, one kept idle
    expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(2);
    // Refused, says so; `one` gives its idle slot back and the release wakes `two` (maxWaitMs is a
    // minute, the leases 30 s: only the two messages can grant this before the test times out).
    (await two.acquire('a.example'))();
    busy();
  });

  it("a killed process's kept slots come back once their leases expire", async () => {
    // A process that took both slots of a host (one in use, one kept) and is killed with -9.
    const script = `
      import { redisPolitenessGate } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
      const g = redisPolitenessGate({ connection: ${JSON.stringify(redis.url)}, perHost: 2, leaseMs: 400 });
      await g.acquire('a.example');
      console.log('held');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          if (d.toString().includes('held')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      expect(await admin.zcard('usp:gate:{a.example}:leases')).toBe(2);
      child.kill('SIGKILL');
      await once(child, 'exit');
      // The dead leases' expiries, final now that nobody renews them.
      const dead = await admin.zrange('usp:gate:{a.example}:leases', '0', '-1', 'WITHSCORES');
      const expiry = Math.max(...dead.filter((_, i) => i % 2 === 1).map(Number));
      const g = gate({ perHost: 2, maxWaitMs: 60_000 });
      // Both slots, once the dead leases expire (no renewal: within leaseMs of the kill), by
      // Redis's clock, which the gate uses: a late reply here cannot make this fail.
      const [a, b] = await Promise.all([g.acquire('a.example'), g.acquire('a.example')]);
      expect(await redisNow()).toBeGreaterThanOrEqual(expiry);
      a();
      b();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('does not hand slots on when the host has a Crawl-delay', async () => {
    const g = gate({ perHost: 2 });
    await g.setCrawlDelay('slow.example', 60);
    const starts: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        const release = await g.acquire('slow.example');
        starts.push(performance.now());
        await turns(3);
        release();
      }),
    );
    starts.sort((a, b) => a - b);
    // As in the Crawl-delay case above: the i-th start at least i delays after the first ask.
    for (const [i, start] of starts.entries()) expect(start - t0).toBeGreaterThanOrEqual(i * 60 - 2);
  });

  it("a process with a long queue for a host lets another process's request in", async () => {
    const busy = gate({ perHost: 1, maxWaitMs: 60_000 });
    const other = gate({ perHost: 1, maxWaitMs: 60_000 });
    const order: string[] = [];
    const first = await busy.acquire('a.example');
    const queued = Array.from({ length: 40 }, async (_, i) => {
      const release = await busy.acquire('a.example');
      order.push(`busy${i}`);
      await turns(2);
      release();
    });
    const theOther = other.acquire('a.example').then(async (release) => {
      order.push('other');
      await turns(2);
      release();
    });
    await turns(10);
    first();
    await Promise.all([...queued, theOther]);
    // Woken by the release that ends a run of handovers (pub/sub: maxWaitMs is a minute).
    expect(order.indexOf('other')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('other')).toBeLessThan(40);
  });

  it('goes on after Redis restarts, its wake-ups too', async () => {
    const own = await startTestRedis({ persistent: true });
    const g = redisPolitenessGate({ connection: own.url, perHost: 1, maxWaitMs: 60_000 });
    const h = redisPolitenessGate({ connection: own.url, perHost: 1, maxWaitMs: 60_000 });
    const watch = new Redis(own.url, { maxRetriesPerRequest: null });
    try {
      (await g.acquire('a.example'))();
      (await h.acquire('b.example'))();
      await own.restart();
      (await g.acquire('a.example'))();
      // Both subscribed again (no clock: each turn is a round trip).
      const subscribers = async () =>
        Number(((await watch.pubsub('NUMSUB', 'usp:gate:released')) as [string, number])[1]);
      while ((await subscribers()) < 2) await turns(1);
      const held = await g.acquire('c.example');
      const waiting = h.acquire('c.example');
      while ((await watch.zcard('usp:gate:{c.example}:waiting')) === 0) await turns(1);
      held();
      // The kept slot goes back at close and wakes h (maxWaitMs is a minute, the lease 30 s).
      await g.close();
      (await waiting)();
    } finally {
      watch.disconnect();
      await g.close();
      await h.close();
      await own.stop();
    }
  });

  it('checks its options early', () => {
    expect(() => redisPolitenessGate({ connection: redis.url, perHsot: 2 } as never)).toThrow(
      /perHsot: unknown option \(did you mean perHost\?\)/,
    );
    expect(() => redisPolitenessGate({ connection: redis.url, perHost: 0 })).toThrow(InvalidOptionError);
    expect(() => redisPolitenessGate({ connection: redis.url, keepIdleMs: -1 })).toThrow(/keepIdleMs/);
    expect(() => redisPolitenessGate({ connection: 42 } as never)).toThrow(/connection/);
  });
});
