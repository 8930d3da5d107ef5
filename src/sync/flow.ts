/**
 * What the flows (inventory, sales, fulfillment) share: their dependencies, passed in, and the handle
 * the daemon uses to stop them.
 */
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { MasterWatch } from '../queue/master-watch.js';
import type { StoreClient } from '../store/client.js';

/** Which parts of a flow this process runs: producers (cron pollers), workers, or both. */
export type Role = 'all' | 'producer' | 'worker';

export interface FlowDeps {
  config: Readonly<Config>;
  /** Opens a new Redis connection (BullMQ workers need their own); the flow closes what it opens. */
  connect: () => Redis;
  store: StoreClient;
  logger: Logger;
  metrics: Metrics;
  /** The clock; tests pass a fixed one. */
  now?: () => number;
  /**
   * This process's name for BullMQ (host:pid): each job records the worker process that took it
   * (`processedBy`, shown in the dashboard), so a job held by a dead process can be traced.
   */
  instance?: string;
  /** Reports a new Redis master (failover or restart) seen by any connection `connect` opened; absent in tools. */
  masterWatch?: MasterWatch;
  /** Takes the workers' Redis connection errors during an outage (the daemon's one account of it); absent in tools. */
  redisErrors?: RedisErrorSink;
}

/** Where a flow's worker reports its errors (src/ops/redis-outage.ts). */
export interface RedisErrorSink {
  /** True when `error` is a Redis connection error, now counted (the caller logs nothing); false: log it as usual. */
  absorb(flow: string, error: unknown): boolean;
}

/** A running flow. */
export interface Flow {
  readonly name: string;
  /** The flow's queues, for the dashboard and the queue-depth metric. */
  readonly queues: readonly Queue[];
  /** The flow's BullMQ workers in this process (none in the producer role), for the Redis watchdog. */
  readonly workers?: readonly Worker[];
  /** Stops producers, lets workers finish within `timeoutMs`, closes connections. */
  close(timeoutMs?: number): Promise<void>;
}
