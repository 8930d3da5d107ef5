/**
 * What the fulfilment producer, worker and one-off updates work with: one Redis connection for state
 * and the `fulfillment` queue, the state, the events. Opened once per flow (or CLI run), closed with it.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Config } from '../../config/schema.js';
import { TypedEmitter } from '../../events.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../ops/metrics.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { StoreClient } from '../../store/client.js';
import type { FlowDeps } from '../flow.js';
import { FulfilmentState } from './state.js';
import type { FulfilmentEvents, FulfilmentJobData } from './types.js';

/** The open resources of the fulfilment flow, shared by its producer, worker and one-off updates. */
export interface FulfilmentRuntime {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly store: StoreClient;
  readonly now: () => number;
  readonly events: TypedEmitter<FulfilmentEvents>;
  readonly redis: Redis;
  readonly state: FulfilmentState;
  readonly queue: Queue<FulfilmentJobData>;
  close(): Promise<void>;
}

/** Job options of every fulfilment job: retries with exponential backoff, trimmed history. */
export function fulfilmentJobOptions(config: Readonly<Config>) {
  return {
    attempts: config.fulfillment.attempts,
    backoff: { type: 'exponential' as const, delay: config.fulfillment.backoffMs, jitter: 0.3 },
    removeOnComplete: { ...config.queue.removeOnComplete },
    removeOnFail: { ...config.queue.removeOnFail },
  };
}

/** Opens the runtime. */
export function openFulfilmentRuntime(deps: FlowDeps, events = new TypedEmitter<FulfilmentEvents>()): FulfilmentRuntime {
  const redis = deps.connect();
  const prefix = deps.config.redis.prefix;
  const queue = new Queue<FulfilmentJobData>(QUEUE_NAMES.fulfillment, {
    connection: redis,
    prefix,
    defaultJobOptions: fulfilmentJobOptions(deps.config),
  });
  return {
    config: deps.config,
    logger: deps.logger.child({ component: 'fulfilment' }),
    metrics: deps.metrics,
    store: deps.store,
    now: deps.now ?? Date.now,
    events,
    redis,
    state: new FulfilmentState(redis, prefix),
    queue,
    async close() {
      await queue.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
