/**
 * What the inventory producer, worker and reconcile work with: one Redis connection for state and
 * queues, the `inventory` queue, the log of refused ERP rows, the state, the events. Opened once per
 * flow (or per reconcile run) and closed with it.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Config } from '../../config/schema.js';
import { TypedEmitter } from '../../events.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../ops/metrics.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import { FailedJobLog } from '../../queue/failed-job-log.js';
import type { StoreClient } from '../../store/client.js';
import type { FlowDeps } from '../flow.js';
import { InventoryState } from './state.js';
import type { InventoryEvents, InventoryJobData } from './types.js';

/** The shared handles of one inventory flow or reconcile run. */
export interface InventoryRuntime {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly store: StoreClient;
  readonly now: () => number;
  readonly events: TypedEmitter<InventoryEvents>;
  /** The runtime's own connection (state and queues); workers open theirs with `connect`. */
  readonly redis: Redis;
  readonly connect: () => Redis;
  readonly state: InventoryState;
  readonly queue: Queue<InventoryJobData>;
  /** ERP rows refused before queueing, kept as failed jobs of `inventory-rejects`. */
  readonly rejects: FailedJobLog;
  close(): Promise<void>;
}

/** Job options of every inventory job: retries with exponential backoff, trimmed history. */
function inventoryJobOptions(config: Readonly<Config>) {
  return {
    attempts: config.inventory.attempts,
    // Jitter spreads the retries of many SKUs that failed together (a store outage).
    backoff: { type: 'exponential' as const, delay: config.inventory.backoffMs, jitter: 0.5 },
    removeOnComplete: { ...config.queue.removeOnComplete },
    removeOnFail: { ...config.queue.removeOnFail },
  };
}

/** Options of `openInventoryRuntime`. */
export interface RuntimeOptions {
  /** Lets a flow share its emitter with the runtime it opens. */
  events?: TypedEmitter<InventoryEvents>;
  /** Nothing will be queued (a dry run): opening the queues writes nothing to Redis either. */
  readOnly?: boolean;
}

/** Opens the runtime. */
export function openInventoryRuntime(deps: FlowDeps, options: RuntimeOptions = {}): InventoryRuntime {
  const redis = deps.connect();
  const prefix = deps.config.redis.prefix;
  const skipMetasUpdate = options.readOnly ?? false;
  const queue = new Queue<InventoryJobData>(QUEUE_NAMES.inventory, {
    connection: redis,
    prefix,
    defaultJobOptions: inventoryJobOptions(deps.config),
    skipMetasUpdate,
  });
  const rejects = new FailedJobLog({
    connection: redis,
    prefix,
    queueName: QUEUE_NAMES.inventoryRejects,
    removeOnFail: { ...deps.config.queue.removeOnFail },
    skipMetasUpdate,
  });
  return {
    config: deps.config,
    logger: deps.logger.child({ component: 'inventory' }),
    metrics: deps.metrics,
    store: deps.store,
    now: deps.now ?? Date.now,
    events: options.events ?? new TypedEmitter<InventoryEvents>(),
    redis,
    connect: deps.connect,
    state: new InventoryState(redis, prefix),
    queue,
    rejects,
    async close() {
      await rejects.close();
      await queue.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
