import { InvalidOptionError } from '@usp-ts/core';

/** The queue the producer fills and the workers drain, unless told otherwise. */
export const DEFAULT_QUEUE_NAME = 'usp-sites';

/** A job's data: the site, and whether to walk it in full. Plain data, as BullMQ stores it. */
export interface QueuedSite {
  /** The normalised homepage URL. */
  readonly site: string;
  readonly full?: true;
}

/** BullMQ builds its keys from the queue name, so a `:` in it is refused. */
export function checkQueueName(name: unknown, option = 'queueName'): string {
  if (typeof name !== 'string' || name === '' || name.includes(':')) {
    throw new InvalidOptionError(
      option,
      `expected a non-empty name without ':', got ${JSON.stringify(name)}`,
    );
  }
  return name;
}
