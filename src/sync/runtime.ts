/**
 * What every flow's runtime shares: the dependencies it was given, its own Redis connection, its
 * events, and the job options of its queue. Each flow adds its queue and state on top.
 */
import type { Redis } from 'ioredis';

import type { Config } from '../config/schema.js';
import { type EventMap, TypedEmitter } from '../events.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { StoreClient } from '../store/client.js';
import type { FlowDeps, RedisErrorSink } from './flow.js';

/** The handles every flow runtime carries. */
export interface FlowRuntime<Events extends EventMap> {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly store: StoreClient;
  readonly now: () => number;
  readonly events: TypedEmitter<Events>;
  /** The runtime's own connection (state and queues); workers open theirs with `connect`. */
  readonly redis: Redis;
  readonly connect: () => Redis;
  /** See FlowDeps.instance. */
  readonly instance: string | undefined;
  /** See FlowDeps.redisErrors. */
  readonly redisErrors: RedisErrorSink | undefined;
}

/** Opens the shared part of a runtime: a Redis connection and a child logger named `component`. */
export function openFlowRuntime<Events extends EventMap>(
  deps: FlowDeps,
  component: string,
  events: TypedEmitter<Events> = new TypedEmitter<Events>(),
): FlowRuntime<Events> {
  return {
    config: deps.config,
    logger: deps.logger.child({ component }),
    metrics: deps.metrics,
    store: deps.store,
    now: deps.now ?? Date.now,
    events,
    redis: deps.connect(),
    connect: deps.connect,
    instance: deps.instance,
    redisErrors: deps.redisErrors,
  };
}

/** Job options of a flow's queue: `attempts` with exponential backoff and jitter, trimmed history. */
export function retryingJobOptions(config: Readonly<Config>, retry: { attempts: number; backoffMs: number }, jitter: number) {
  return {
    attempts: retry.attempts,
    // Jitter spreads the retries of the many jobs that failed together (a store or ERP outage).
    backoff: { type: 'exponential' as const, delay: retry.backoffMs, jitter },
    removeOnComplete: { ...config.queue.removeOnComplete },
    removeOnFail: { ...config.queue.removeOnFail },
  };
}

/** Closes a runtime's own connection, dropping it if a clean QUIT is impossible (Redis down). */
export async function closeConnection(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
