import { politenessGateSuite } from '@usp-ts/driver-testkit';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { afterAll, beforeAll } from 'vitest';
import { type RedisPolitenessGate, redisPolitenessGate } from '../src/redis-gate.js';

// The Redis gate through the suite every gate runs (its own tests cover what only a shared gate
// does: several processes, leases of a killed one, a Redis restart).
let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.stop();
});

politenessGateSuite('redisPolitenessGate', {
  open: async (limits) => redisPolitenessGate({ connection: redis.url, ...limits }),
  close: (gate) => (gate as RedisPolitenessGate).close(),
});
