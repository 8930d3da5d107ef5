/**
 * What the fulfillment producer, worker and one-off updates work with: one Redis connection for state
 * and the `fulfillment` queue, the state, the events. Opened once per flow (or CLI run), closed with it.
 */
import type { Config } from '../../config/schema.js';
import { TypedEmitter } from '../../events.js';
import { Queue } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { FlowDeps } from '../flow.js';
import { closeConnection, type FlowRuntime, openFlowRuntime, retryingJobOptions } from '../runtime.js';
import { FulfillmentState } from './state.js';
import type { FulfillmentEvents, FulfillmentJobData } from './types.js';

/** The open resources of the fulfillment flow, shared by its producer, worker and one-off updates. */
export interface FulfillmentRuntime extends FlowRuntime<FulfillmentEvents> {
  readonly state: FulfillmentState;
  readonly queue: Queue<FulfillmentJobData>;
  close(): Promise<void>;
}

/** Job options of every fulfillment job: retries with exponential backoff, trimmed history. */
export function fulfillmentJobOptions(config: Readonly<Config>) {
  return retryingJobOptions(config, config.fulfillment, 0.3);
}

/** Opens the runtime. */
export function openFulfillmentRuntime(deps: FlowDeps, events = new TypedEmitter<FulfillmentEvents>()): FulfillmentRuntime {
  const base = openFlowRuntime(deps, 'fulfillment', events);
  const { redis } = base;
  const prefix = deps.config.redis.prefix;
  const queue = new Queue<FulfillmentJobData>(QUEUE_NAMES.fulfillment, {
    connection: redis,
    prefix,
    defaultJobOptions: fulfillmentJobOptions(deps.config),
  });
  return {
    ...base,
    state: new FulfillmentState(redis, prefix),
    queue,
    async close() {
      await queue.close();
      await closeConnection(redis);
    },
  };
}
