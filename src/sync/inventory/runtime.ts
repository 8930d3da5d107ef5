/**
 * What the inventory producer, worker and reconcile work with: one Redis connection for state and
 * queues, the `inventory` queue, the log of refused ERP rows, the state, the events. Opened once per
 * flow (or per reconcile run) and closed with it.
 */
import type { Queue } from 'bullmq';

import type { TypedEmitter } from '../../events.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import { FailedJobLog } from '../../queue/failed-job-log.js';
import type { FlowDeps } from '../flow.js';
import { closeConnection, type FlowRuntime, openFlowRuntime } from '../runtime.js';
import { StoreRejects } from '../store-rejects.js';
import { openInventoryQueue } from './enqueue.js';
import { openReservationStore, type ReservationStore } from './listing/index.js';
import { type KitCatalog, redisKitCatalog } from './listing/index.js';
import { InventoryState } from './state.js';
import { homeSiteOf } from './target-key.js';
import type { InventoryEvents, InventoryJobData } from './types.js';

/** The shared handles of one inventory flow or reconcile run. */
export interface InventoryRuntime extends FlowRuntime<InventoryEvents> {
  readonly state: InventoryState;
  /** Units of store sales the ERP has not booked yet, per SKU. */
  readonly reservations: ReservationStore;
  /** The kit compositions (`inventory.kits`); undefined without kits, and nothing about kits is read. */
  readonly kits?: KitCatalog;
  readonly queue: Queue<InventoryJobData>;
  /** ERP rows refused before queueing, kept as failed jobs of `inventory-rejects`. */
  readonly rejects: FailedJobLog;
  /** Store items that did not fit on read (the reconcile), kept as failed jobs of `store-rejects`. */
  readonly storeRejects: StoreRejects;
  close(): Promise<void>;
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
  const base = openFlowRuntime(deps, 'inventory', options.events);
  const { redis } = base;
  const prefix = deps.config.redis.prefix;
  const skipMetasUpdate = options.readOnly ?? false;
  const queue = openInventoryQueue(redis, deps.config, skipMetasUpdate);
  const rejects = new FailedJobLog({
    connection: redis,
    prefix,
    queueName: QUEUE_NAMES.inventoryRejects,
    removeOnFail: { ...deps.config.queue.removeOnFail },
    skipMetasUpdate,
    onError: (error) => base.logger.debug({ err: error.message }, 'inventory rejects queue: connection error'),
  });
  const storeRejects = new StoreRejects({
    connection: redis,
    prefix,
    removeOnFail: { ...deps.config.queue.removeOnFail },
    metrics: base.metrics,
    logger: base.logger,
    skipMetasUpdate,
  });
  return {
    ...base,
    state: new InventoryState(redis, prefix, homeSiteOf(deps.config)),
    reservations: openReservationStore(redis, deps.config),
    ...(deps.config.inventory.kits.length > 0 ? { kits: redisKitCatalog(redis, prefix) } : {}),
    queue,
    rejects,
    storeRejects,
    async close() {
      await storeRejects.close();
      await rejects.close();
      await queue.close();
      await closeConnection(redis);
    },
  };
}
