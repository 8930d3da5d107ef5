/**
 * The fulfilment flow, ERP → store: the producer role polls each shipment source on its schedule and
 * queues the updates; the worker role applies them to the store's sales through the guard. Also
 * `updateSale`, the same guarded update for one sale outside the queue (CLI `storesync sales fulfil`).
 */
import type { Worker } from 'bullmq';

import { FULFILMENT_FIELDS } from '../../erp/fields.js';
import { createSource } from '../../erp/index.js';
import type { ChangeSource, Cursor } from '../../erp/types.js';
import type { TypedEmitter } from '../../events.js';
import { closeWorkerWithin } from '../../ops/worker-shutdown.js';
import { startSchedule } from '../../queue/schedule.js';
import type { Flow, FlowDeps, Role } from '../flow.js';
import { applyFulfilment } from './apply-update.js';
import { pollFulfilmentSource } from './producer.js';
import { openFulfilmentRuntime } from './runtime.js';
import type { FulfilmentEvents, FulfilmentPollReport, FulfilmentResult, FulfilmentUpdate } from './types.js';
import { startFulfilmentWorker } from './worker.js';

/** A running fulfilment flow. */
export interface FulfilmentFlow extends Flow {
  readonly events: TypedEmitter<FulfilmentEvents>;
  /** The flow's BullMQ workers (none in the producer role). */
  readonly workers: readonly Worker[];
  /** Polls one source now (as its cron tick would), on this instance. */
  poll(source: string): Promise<FulfilmentPollReport>;
}

/** Starts the producer (a cron task per enabled source), the worker, or both, as `role` says. */
export async function startFulfilmentFlow(deps: FlowDeps, { role }: { role: Role }): Promise<FulfilmentFlow> {
  const rt = openFulfilmentRuntime(deps);
  const { config } = deps;
  const configs = role === 'worker' ? [] : config.fulfillment.sources.filter((source) => source.enabled);
  const sources = new Map<string, { source: ChangeSource; limit: number; initialCursor: Cursor }>();
  try {
    for (const sourceConfig of configs) {
      sources.set(sourceConfig.name, {
        source: createSource(sourceConfig, { fields: FULFILMENT_FIELDS, logger: rt.logger, now: rt.now }),
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
  const poll = async (name: string): Promise<FulfilmentPollReport> => {
    const entry = sources.get(name);
    if (!entry) throw new Error(`fulfilment source "${name}" is not polled by this instance`);
    return pollFulfilmentSource(rt, entry.source, { limit: entry.limit, initialCursor: entry.initialCursor });
  };

  const schedule = await startSchedule(
    rt.redis,
    config.redis.prefix,
    configs.map((sourceConfig) => ({
      name: `fulfilment:poll:${sourceConfig.name}`,
      expression: sourceConfig.schedule,
      run: () =>
        poll(sourceConfig.name).then(
          () => undefined,
          (error: Error) => {
            rt.logger.error({ source: sourceConfig.name, err: error.message }, 'fulfilment poll failed; the cursor did not move');
            rt.events.emit('fulfilment:poll:failed', { source: sourceConfig.name, error });
          },
        ),
    })),
    rt.logger,
  );
  const workerConnection = role === 'producer' ? undefined : deps.connect();
  const worker = workerConnection && startFulfilmentWorker(rt, workerConnection);
  rt.logger.info({ role, sources: [...sources.keys()] }, 'fulfilment flow started');

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
export async function updateSale(deps: FlowDeps, saleId: number, update: FulfilmentUpdate, options: { force?: boolean } = {}): Promise<FulfilmentResult> {
  const rt = openFulfilmentRuntime(deps);
  try {
    return await applyFulfilment(rt, { saleId, update, force: options.force ?? false, source: 'cli' });
  } finally {
    await rt.close();
  }
}
