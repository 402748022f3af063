import type { SiteJob } from '@usp-ts/batch';
import { startTestRedis, type TestRedis } from '@usp-ts/test-redis';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqSiteQueue } from '../src/bullmq-site-queue.js';

// bullmqSiteQueue as batch's queue port: its enqueue against a real Redis on 127.0.0.1.

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.stop();
});

describe('bullmqSiteQueue.enqueue', () => {
  it('queues the jobs in the order given, full ones among them, each site once', async () => {
    const queueName = 'site-queue-order';
    async function* jobs(): AsyncGenerator<SiteJob> {
      yield { site: 'https://a.example/', full: true };
      yield { site: 'https://b.example/' };
      yield { site: 'https://c.example/', full: true };
      yield { site: 'https://b.example/', full: true };
    }
    const added = await bullmqSiteQueue({ connection: redis.url, queueName }).enqueue(jobs());
    expect(added).toBe(3);
    const queue = new Queue(queueName, { connection: { url: redis.url } });
    try {
      const waiting = await queue.getJobs(['waiting'], 0, -1, true);
      expect(waiting.map((j) => [j.data.site, j.data.full === true])).toEqual([
        ['https://a.example/', true],
        ['https://b.example/', false],
        ['https://c.example/', true],
      ]);
    } finally {
      await queue.close();
    }
  });
});
