/**
 * The inventory flow, ERP → store. The producer role polls each source on its cron schedule (and runs
 * the scheduled reconcile); the worker role runs the BullMQ worker that writes to the store. With
 * several instances, a Redis run coordinator makes each cron tick run on one instance only.
 */
import type { Worker } from 'bullmq';

import type { SourceConfig } from '../../config/schema.js';
import { INVENTORY_FIELDS } from '../../erp/fields.js';
import { createSource } from '../../erp/index.js';
import type { ChangeSource } from '../../erp/types.js';
import { TypedEmitter } from '../../events.js';
import { type ScheduledRun, startSchedule } from '../../queue/schedule.js';
import { closeWorkerWithin } from '../../queue/worker-shutdown.js';
import type { Flow, FlowDeps, Role } from '../flow.js';
import { pollSource } from './producer.js';
import { type ReconcileOptions, reconcileWith } from './reconcile.js';
import { openInventoryRuntime } from './runtime.js';
import type { InventoryEvents, PollReport, ReconcileReport } from './types.js';
import { createInventoryWorker } from './worker.js';

/** A running inventory flow. */
export interface InventoryFlow extends Flow {
  readonly events: TypedEmitter<InventoryEvents>;
  /** The flow's BullMQ workers (none in the producer role), for the daemon's watchdog. */
  readonly workers: readonly Worker[];
  /** Polls one source now (as its cron tick would), on this instance. */
  poll(source: string): Promise<PollReport>;
  /** Runs a reconcile now with this instance's sources (none in the worker role: use `runReconcile`). */
  reconcile(options?: ReconcileOptions): Promise<ReconcileReport>;
}

/** Starts the producer (cron tasks), the worker, or both, as `role` says. */
export async function startInventoryFlow(deps: FlowDeps, { role }: { role: Role }): Promise<InventoryFlow> {
  const events = new TypedEmitter<InventoryEvents>();
  const rt = openInventoryRuntime(deps, { events });
  const { config } = deps;
  const producing = role !== 'worker';
  const configs = producing ? config.inventory.sources.filter((source) => source.enabled) : [];
  const sources = new Map<string, { source: ChangeSource; config: SourceConfig }>();
  const closeSources = () => Promise.allSettled([...sources.values()].map((entry) => entry.source.close()));
  const abandon = async (error: unknown): Promise<never> => {
    // A source with a bad mapping or a bad cron expression stops the start; what was opened is closed.
    await closeSources();
    await rt.close();
    throw error;
  };
  try {
    for (const sourceConfig of configs) {
      sources.set(sourceConfig.name, { source: createSource(sourceConfig, { fields: INVENTORY_FIELDS, logger: rt.logger }), config: sourceConfig });
    }
  } catch (error) {
    return abandon(error);
  }
  const poll = async (name: string): Promise<PollReport> => {
    const entry = sources.get(name);
    if (!entry) throw new Error(`inventory source "${name}" is not polled by this instance`);
    // CSV sources have no initial cursor: they read whatever files are in their folder.
    const initialCursor = 'initialCursor' in entry.config ? entry.config.initialCursor : null;
    return pollSource(rt, entry.source, { limit: entry.config.limit, initialCursor });
  };
  const reconcile = (options: ReconcileOptions = {}): Promise<ReconcileReport> =>
    reconcileWith(rt, [...sources.values()].map((entry) => entry.source), options);

  const runs: ScheduledRun[] = configs.map((sourceConfig) => ({
    name: `inventory:poll:${sourceConfig.name}`,
    expression: sourceConfig.schedule,
    run: () =>
      poll(sourceConfig.name).then(
        () => undefined,
        (error: Error) => {
          rt.logger.error({ source: sourceConfig.name, err: error }, 'inventory poll failed; its cursor did not move');
          events.emit('inventory:poll:failed', { source: sourceConfig.name, error });
        },
      ),
  }));
  const reconcileSchedule = config.inventory.reconcile.schedule;
  if (producing && reconcileSchedule !== null) {
    runs.push({
      name: 'inventory:reconcile',
      expression: reconcileSchedule,
      run: (signal) =>
        reconcile({ signal }).then(
          () => undefined,
          (error: Error) => {
            if (signal.aborted) return;
            rt.logger.error({ err: error }, 'scheduled inventory reconcile failed');
            events.emit('inventory:reconcile:failed', { error });
          },
        ),
    });
  }
  const schedule = await startSchedule(rt.redis, config.redis.prefix, runs, rt.logger).catch(abandon);

  const workerConnection = role === 'producer' ? undefined : rt.connect();
  const worker = workerConnection && createInventoryWorker(rt, workerConnection);

  return {
    name: 'inventory',
    queues: [rt.queue, rt.rejects.queue, rt.storeRejects.queue],
    events,
    workers: worker ? [worker] : [],
    poll,
    reconcile,
    async close(timeoutMs = config.shutdown.timeoutMs) {
      await schedule.stop();
      if (worker) await closeWorkerWithin(worker, timeoutMs, rt.logger);
      await workerConnection?.quit().catch(() => workerConnection.disconnect());
      await closeSources();
      await rt.close();
    },
  };
}
