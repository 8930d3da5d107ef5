/**
 * Redis connections and the queue names. BullMQ needs `maxRetriesPerRequest: null` on connections used
 * by workers (blocking commands); the same settings suit queues, so there is one factory.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

import { Cluster, Redis, type RedisOptions } from 'ioredis';

import { DEFAULT_REDIS_URL, type RedisConfig } from '../config/redis-options.js';

export { redisSecrets } from '../config/redis-options.js';
import { redactText } from '../secrets.js';

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

/** What a connection is opened to: the `redis` config block, or a bare URL (tests, the probe of a private server). */
export type RedisTarget = string | Omit<RedisConfig, 'prefix'>;

/** Longest pause between two reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 5000;

/**
 * Opens a connection for BullMQ and for storesync's own keys; it reconnects forever with backoff. Every connection
 * storesync opens goes through here, so all of them follow a Sentinel failover (ioredis asks the sentinels for the
 * master on each reconnect; a dead master closes the connections) or a Cluster's slot moves. A Cluster is returned typed
 * as `Redis`: storesync only issues commands on keys under its hash-tagged prefix (one slot), which a Cluster client
 * routes like a single server; BullMQ takes either.
 */
export function createRedis(target: RedisTarget, options: RedisOptions = {}): Redis {
  const failoverTimeoutMs = typeof target === 'string' ? 30_000 : target.failoverTimeoutMs;
  const maxDelay = Math.min(MAX_RECONNECT_DELAY_MS, Math.floor(failoverTimeoutMs / 6));
  const base: RedisOptions = {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(times * 200, maxDelay),
    ...options,
  };
  if (typeof target === 'string') return new Redis(target, base);
  const tls = tlsOptions(target.tls);
  const auth: RedisOptions = {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(tls === undefined ? {} : { tls }),
  };
  if (target.cluster !== undefined) {
    const { retryStrategy, enableOfflineQueue, lazyConnect, ...redisOptions } = { ...base, ...auth };
    const cluster = new Cluster(
      target.cluster.map((node) => ({ ...node })),
      {
        redisOptions,
        clusterRetryStrategy: retryStrategy === null ? () => null : (times) => retryStrategy?.(times) ?? null,
        enableReadyCheck: true,
        ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
        ...(lazyConnect === undefined ? {} : { lazyConnect }),
        // A master's failover moves its slots: keep retrying the command until the new owner answers.
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 200,
        retryDelayOnTryAgain: 200,
        maxRedirections: 64,
      },
    );
    return cluster as unknown as Redis;
  }
  if (target.sentinels !== undefined) {
    return new Redis({
      ...base,
      ...auth,
      sentinels: target.sentinels.map((node) => ({ ...node })),
      name: target.name as string,
      ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
      ...(tls === undefined ? {} : { enableTLSForSentinelMode: true, sentinelTLS: tls }),
      sentinelRetryStrategy: (times) => Math.min(times * 200, maxDelay),
      // No `failoverDetector`: its +switch-master handler disconnects a client that is still connecting (asking
      // the sentinels after the master died); the connect then fails with "Connection is closed." and ioredis
      // ends the client for good (status "end", never reconnected: ioredis #1683). Seen in 2 of 6 failover test
      // runs (test/ha/sentinel-failover.test.ts): the tick lock's connection dead, no poll ran again. A killed
      // master closes the connections anyway, and they ask the sentinels again on reconnect.
    });
  }
  return new Redis(target.url ?? DEFAULT_REDIS_URL, { ...base, ...auth });
}

/** Node TLS options for `redis.tls`; the CA file is read here, its path named if it cannot be. */
export function tlsOptions(tls: RedisConfig['tls']): ConnectionOptions | undefined {
  if (tls === false) return undefined;
  if (tls === true) return {};
  let ca: string | undefined;
  if (tls.caFile !== undefined) {
    try {
      ca = readFileSync(tls.caFile, 'utf8');
    } catch (error) {
      throw new Error(`redis.tls.caFile: cannot read ${tls.caFile} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
    }
  }
  return { rejectUnauthorized: tls.rejectUnauthorized, ...(ca === undefined ? {} : { ca }) };
}

/** The connection's settings as a log line may show them: hosts and ports, never a password. */
export function describeRedis(target: RedisTarget): string {
  if (typeof target === 'string') return redactText(target);
  const nodes = (list: ReadonlyArray<{ host: string; port: number }>): string => list.map((node) => `${node.host}:${node.port}`).join(',');
  if (target.cluster !== undefined) return `cluster ${nodes(target.cluster)}`;
  if (target.sentinels !== undefined) return `sentinel ${target.name ?? ''}@${nodes(target.sentinels)}`;
  return redactText(target.url ?? DEFAULT_REDIS_URL);
}

/** Key of storesync's own state (cursors, pending changes, acknowledged values) under the prefix. */
export function stateKey(prefix: string, ...parts: Array<string | number>): string {
  return [prefix, 'state', ...parts].join(':');
}
