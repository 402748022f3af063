import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { OpenedResources } from '@usp-ts/test-server';

/**
 * A server counting its connections and the requests it has in flight at once: `/x` is answered
 * at once, `/hold` when the test calls `releaseAll` (no wall-clock wait decides either).
 */
export async function holdingServer(opened: OpenedResources) {
  const sockets = new Set<Socket>();
  const held: (() => void)[] = [];
  const arrivals: (() => void)[] = [];
  let heldTotal = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const track = (req: IncomingMessage, res: ServerResponse) => {
    sockets.add(req.socket);
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    res.on('finish', () => inFlight--);
  };
  const s = await opened.server({
    '/x': (req: IncomingMessage, res: ServerResponse) => {
      track(req, res);
      res.end('x');
    },
    '/hold': (req: IncomingMessage, res: ServerResponse) => {
      track(req, res);
      held.push(() => res.end('held'));
      heldTotal++;
      for (const f of arrivals.splice(0)) f();
    },
  });
  return {
    origin: s.origin,
    sockets,
    maxInFlight: () => maxInFlight,
    /** Resolves once `n` `/hold` requests in all have reached the server. */
    holding: (n: number): Promise<void> =>
      new Promise((resolve) => {
        const check = () => (heldTotal >= n ? resolve() : arrivals.push(check));
        check();
      }),
    releaseAll: () => {
      for (const f of held.splice(0)) f();
    },
  };
}
