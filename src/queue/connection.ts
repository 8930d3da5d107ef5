/**
 * Redis connections and the queue names. BullMQ needs `maxRetriesPerRequest: null` on connections used
 * by workers (blocking commands); the same settings suit queues, so there is one factory.
 */
import { Redis, type RedisOptions } from 'ioredis';

/** The queues storesync uses. */
export const QUEUE_NAMES = {
  inventory: 'inventory',
  /** ERP rows refused before queueing, kept as failed jobs so they show in the dashboard. */
  inventoryRejects: 'inventory-rejects',
  /** Store records (sales, inventory items) that did not fit their schema on read, kept as failed jobs. */
  storeRejects: 'store-rejects',
  sales: 'sales',
  fulfillment: 'fulfillment',
  control: 'control',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** Opens a connection for BullMQ and for storesync's own keys; it reconnects forever with backoff. */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(times * 200, 5000),
    ...options,
  });
}

/** Key of storesync's own state (cursors, pending changes, acknowledged values) under the prefix. */
export function stateKey(prefix: string, ...parts: Array<string | number>): string {
  return [prefix, 'state', ...parts].join(':');
}
