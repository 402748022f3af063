import { InvalidOptionError } from '@usp-ts/core';
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';

/** A Redis to use: a `redis://HOST:PORT[/DB]` (or `rediss://`) URL, or an ioredis client you own. */
export type RedisConnection = string | Redis;

/** Checks a connection option early: a client, or a URL with the redis scheme. */
export function checkConnection(connection: unknown, option = 'connection'): RedisConnection {
  if (connection instanceof Redis) return connection;
  if (typeof connection === 'string') {
    let url: URL | null = null;
    try {
      url = new URL(connection);
    } catch {
      url = null;
    }
    if (url !== null && (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '') {
      return connection;
    }
  }
  throw new InvalidOptionError(
    option,
    `expected a redis://HOST:PORT[/DB] URL or an ioredis client, got ${JSON.stringify(String(connection))}`,
  );
}

/** What BullMQ's classes take: the caller's client as is, or options that make BullMQ open its own. */
export function bullConnection(connection: RedisConnection): ConnectionOptions {
  return typeof connection === 'string' ? { url: connection } : connection;
}
