import type { Readable } from 'node:stream';

const noop = () => {};

type Event = 'readable' | 'end' | 'error' | 'close' | 'drain';

/** Resolves on the first of `events`; `cancel` detaches the listeners if something else won. */
export function nextEvent(
  emitter: NodeJS.EventEmitter,
  events: readonly Event[],
): { promise: Promise<void>; cancel: () => void } {
  let cancel = noop;
  const promise = new Promise<void>((resolve) => {
    const fire = () => {
      cancel();
      resolve();
    };
    for (const e of events) emitter.on(e, fire);
    cancel = () => {
      for (const e of events) emitter.off(e, fire);
    };
  });
  return { promise, cancel };
}

/**
 * Reads a stream chunk by chunk. Unlike the stream's own async iterator it hands out what is
 * still buffered after an error before rethrowing it, so bytes received before a reset count.
 */
export async function* pullReadable(stream: Readable): AsyncGenerator<Buffer> {
  while (true) {
    const chunk = stream.read() as Buffer | null;
    if (chunk !== null) {
      yield chunk;
      continue;
    }
    if (stream.errored) throw stream.errored;
    if (stream.readableEnded || stream.destroyed) return;
    await nextEvent(stream, ['readable', 'end', 'error', 'close']).promise;
  }
}
