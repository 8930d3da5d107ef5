/**
 * The fulfillment flow, ERP → store: the producer role polls each shipment source on its schedule and
 * queues the updates; the worker role applies them to the store's sales through the guard. Also
 * `updateSale`, the same guarded update for one sale outside the queue (CLI `storesync sales fulfil`).
 */
import type { Worker } from 'bullmq';

import { FULFILLMENT_FIELDS } from '../../erp/fields.js';
import { createSource } from '../../erp/index.js';
import type { ChangeSource, Cursor } from '../../erp/types.js';
import type { TypedEmitter } from '../../events.js';
import { startSchedule } from '../../queue/schedule.js';
import { closeWorkerWithin } from '../../queue/worker-shutdown.js';
import type { Flow, FlowDeps, Role } from '../flow.js';
import { applyFulfillment } from './apply-update.js';
import { pollFulfillmentSource } from './producer.js';
import { openFulfillmentRuntime } from './runtime.js';
import type { FulfillmentEvents, FulfillmentPollReport, FulfillmentResult, FulfillmentUpdate } from './types.js';
import { startFulfillmentWorker } from './worker.js';

/** A running fulfillment flow. */
export interface FulfillmentFlow extends Flow {
  readonly events: TypedEmitter<FulfillmentEvents>;
  /** The flow's BullMQ workers (none in the producer role). */
  readonly workers: readonly Worker[];
  /** Polls one source now (as its cron tick would), on this instance. */
  poll(source: string): Promise<FulfillmentPollReport>;
}

/** Starts the producer (a cron task per enabled source), the worker, or both, as `role` says. */
export async function startFulfillmentFlow(deps: FlowDeps, { role }: { role: Role }): Promise<FulfillmentFlow> {
  const rt = openFulfillmentRuntime(deps);
  const { config } = deps;
  const configs = role === 'worker' ? [] : config.fulfillment.sources.filter((source) => source.enabled);
  const sources = new Map<string, { source: ChangeSource; limit: number; initialCursor: Cursor }>();
  try {
    for (const sourceConfig of configs) {
      sources.set(sourceConfig.name, {
        source: createSource(sourceConfig, { fields: FULFILLMENT_FIELDS, logger: rt.logger, now: rt.now }),
        limit: sourceConfig.limit,
        // CSV sources have no initial cursor: they read whatever files are in their folder.
        initialCursor: 'initialCursor' in sourceConfig ? sourceConfig.initialCursor : null,
      });
    }
  } catch (error) {
    await Promise.allSettled([...sources.values()].map((entry) => entry.source.close()));
    await rt.close();
    throw error;
  }
  const poll = async (name: string): Promise<FulfillmentPollReport> => {
    const entry = sources.get(name);
    if (!entry) throw new Error(`fulfillment source "${name}" is not polled by this instance`);
    return pollFulfillmentSource(rt, entry.source, { limit: entry.limit, initialCursor: entry.initialCursor });
  };

  const schedule = await startSchedule(
    rt.redis,
    config.redis.prefix,
    configs.map((sourceConfig) => ({
      name: `fulfillment:poll:${sourceConfig.name}`,
      expression: sourceConfig.schedule,
      run: () =>
        poll(sourceConfig.name).then(
          () => undefined,
          (error: Error) => {
            rt.logger.error({ source: sourceConfig.name, err: error.message }, 'fulfillment poll failed; the cursor did not move');
            rt.events.emit('fulfillment:poll:failed', { source: sourceConfig.name, error });
          },
        ),
    })),
    rt.logger,
  );
  const workerConnection = role === 'producer' ? undefined : deps.connect();
  const worker = workerConnection && startFulfillmentWorker(rt, workerConnection);
  rt.logger.info({ role, sources: [...sources.keys()] }, 'fulfillment flow started');

  return {
    name: 'fulfillment',
    queues: [rt.queue],
    events: rt.events,
    workers: worker ? [worker] : [],
    poll,
    async close(timeoutMs = config.shutdown.timeoutMs) {
      await schedule.stop();
      if (worker) await closeWorkerWithin(worker, timeoutMs, rt.logger);
      await workerConnection?.quit().catch(() => workerConnection.disconnect());
      await Promise.allSettled([...sources.values()].map((entry) => entry.source.close()));
      await rt.close();
    },
  };
}

/** Applies one update to one sale now, outside the queue (the same guard as the worker). */
export async function updateSale(deps: FlowDeps, saleId: number, update: FulfillmentUpdate, options: { force?: boolean } = {}): Promise<FulfillmentResult> {
  const rt = openFulfillmentRuntime(deps);
  try {
    return await applyFulfillment(rt, { saleId, update, force: options.force ?? false, source: 'cli' });
  } finally {
    await rt.close();
  }
}
