// Our library, as a user would call it: the `usp` package with its defaults. Sites stream with
// walkPages (the consumer counts pages), one URL with walkSitemapPages, an in-memory document with
// parseSitemapDocument. `task.workers` (0, 1, 2) picks the document parser explicitly: 0 parses
// in the walking thread, n > 0 uses a pool of n worker threads.
import { iterate } from './common.mjs';

export async function prepare(task) {
  const usp = await import('usp');
  const webClientOptions = { allowPrivateNetworks: true };

  if (task.mode === 'file') {
    const store = usp.countingPageStore();
    return async () => {
      const parsed = await usp.parseSitemapDocument(iterate(task.chunks), {
        url: `http://bench.invalid/${task.file.split('/').pop()}`,
        pageStore: store,
      });
      return { urls: parsed.sitemap.pageCount ?? null, bytes: parsed.bytes };
    };
  }

  // The HTTP stack is loaded with the first web client, not with the package; the peers load
  // theirs at import. Like every library here, ours is loaded before the clock starts.
  await usp.createWebClient(webClientOptions).close();

  let pool = null;
  const options = { webClientOptions };
  if (task.workers === 0) {
    options.parseWorkers = 0;
  } else if (task.workers !== undefined) {
    pool = usp.createWorkerParser({ workers: task.workers });
    options.parse = pool.parse;
  }

  const walk =
    task.mode === 'http'
      ? () => usp.walkSitemapPages(task.url, options)
      : () => usp.walkPages(`${task.origin}/`, options);
  return async () => {
    let urls = 0;
    try {
      for await (const _walked of walk()) urls++;
    } finally {
      await pool?.close();
    }
    return { urls };
  };
}
