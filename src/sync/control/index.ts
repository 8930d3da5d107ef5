/**
 * The control flow: a `control` queue whose jobs start a resync (inventory reconcile, of every item
 * or listed SKUs, possibly dry; or a sales re-pull for a date window). Jobs come from the dashboard's
 * Add-job form and from `POST /admin/resync/...`; the worker role processes them. Started and stopped
 * by the flow lifecycle (../lifecycle.ts), like the data flows.
 */
import type { Queue, Worker } from 'bullmq';

import { QUEUE_NAMES } from '../../queue/connection.js';
import type { Flow, FlowDeps, Role } from '../flow.js';
import { startFlow } from '../lifecycle.js';
import type { ControlActions } from './actions.js';
import type { ControlJobData } from './job-data.js';
import { addControlJob, type ControlRuntime, openControlRuntime } from './runtime.js';
import { createControlWorker } from './worker.js';

// The control flow's public surface, so callers import from the folder.
export type { ControlActions, ReconcileRequest, SalesPullRequest } from './actions.js';
export { type ControlJobData, controlJobJsonSchema, controlJobName, parseControlJob } from './job-data.js';

/** The running control flow. */
export interface ControlFlow extends Flow {
  readonly queue: Queue;
  /** The worker, in the worker and all roles. */
  readonly workers: readonly Worker[];
  /** Queues a validated control job; resolves with its id. */
  enqueue(data: ControlJobData): Promise<string>;
}

/** Starts the control queue, and its worker unless the role is `producer`. */
export async function startControlFlow(deps: FlowDeps, options: { role: Role; actions: ControlActions }): Promise<ControlFlow> {
  const { config } = deps;
  const flow = await startFlow<ControlRuntime>({
    role: options.role,
    openRuntime: () => openControlRuntime(deps),
    worker: (rt, connection) =>
      createControlWorker({
        connection,
        prefix: config.redis.prefix,
        queueName: QUEUE_NAMES.control,
        actions: options.actions,
        logger: rt.logger,
        metrics: deps.metrics,
        removeOnComplete: config.queue.removeOnComplete,
        removeOnFail: config.queue.removeOnFail,
        ...(deps.now ? { now: deps.now } : {}),
      }),
  });
  const { queue } = flow.rt;

  return {
    name: 'control',
    queues: [queue],
    queue,
    workers: flow.workers,
    enqueue: (data) => addControlJob(queue, data),
    close: flow.close,
  };
}
