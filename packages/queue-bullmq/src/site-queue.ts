import { InvalidOptionError } from '@usp-ts/core';

/** The queue the producer fills and the workers drain, unless told otherwise. */
export const DEFAULT_QUEUE_NAME = 'usp-sites';

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
