export type { PolitenessGate, Release } from './politeness-gate.js';
export { type RedisGateOptions, type RedisPolitenessGate, redisPolitenessGate } from './redis-gate.js';
