// The producer side of the queue floor in its own process (for counting its instructions):
// `node queue-floor-producer.mjs REDIS_URL QUEUE N` enqueues N jobs that do nothing and waits for
// their ends, as `usp batch --queue` does; then exits.
import { queuePackage } from './queue-package.mjs';

const { enqueueSites, Redis } = await queuePackage();

const [url, queueName, count] = process.argv.slice(2);
const sites = Array.from({ length: Number(count) }, (_, i) => `http://s${i}.invalid/`);
// A client of its own, not the URL: enqueueSites's 5 s reachability check fails under callgrind.
const connection = new Redis(url, { maxRetriesPerRequest: null });
const done = await enqueueSites(sites, { connection, queueName, wait: true });
connection.disconnect();
if (done.finished !== sites.length) throw new Error(`floor producer: ${done.finished} of ${sites.length}`);
