/**
 * What the fulfilment producer, worker and one-off updates work with: one Redis connection for state
 * and the `fulfillment` queue, the state, the events. Opened once per flow (or CLI run), closed with it.
 */
import { Queue } from 'bullmq';

import type { Config } from '../../config/schema.js';
import { TypedEmitter } from '../../events.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { FlowDeps } from '../flow.js';
import { closeConnection, type FlowRuntime, openFlowRuntime, retryingJobOptions } from '../runtime.js';
import { FulfilmentState } from './state.js';
import type { FulfilmentEvents, FulfilmentJobData } from './types.js';

/** The open resources of the fulfilment flow, shared by its producer, worker and one-off updates. */
export interface FulfilmentRuntime extends FlowRuntime<FulfilmentEvents> {
  readonly state: FulfilmentState;
  readonly queue: Queue<FulfilmentJobData>;
  close(): Promise<void>;
}

/** Job options of every fulfilment job: retries with exponential backoff, trimmed history. */
export function fulfilmentJobOptions(config: Readonly<Config>) {
  return retryingJobOptions(config, config.fulfillment, 0.3);
}

/** Opens the runtime. */
export function openFulfilmentRuntime(deps: FlowDeps, events = new TypedEmitter<FulfilmentEvents>()): FulfilmentRuntime {
  const base = openFlowRuntime(deps, 'fulfilment', events);
  const { redis } = base;
  const prefix = deps.config.redis.prefix;
  const queue = new Queue<FulfilmentJobData>(QUEUE_NAMES.fulfillment, {
    connection: redis,
    prefix,
    defaultJobOptions: fulfilmentJobOptions(deps.config),
  });
  return {
    ...base,
    state: new FulfilmentState(redis, prefix),
    queue,
    async close() {
      await queue.close();
      await closeConnection(redis);
    },
  };
}
