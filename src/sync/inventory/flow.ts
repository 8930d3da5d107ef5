/**
 * The inventory flow, ERP → store. The producer role polls each source on its cron schedule (and runs
 * the scheduled reconcile); the worker role runs the BullMQ worker that writes to the store. Started
 * and stopped by the flow lifecycle (../lifecycle.ts).
 */
import type { Worker } from 'bullmq';

import { INVENTORY_FIELDS } from '../../erp/fields.js';
import { createSource } from '../../erp/index.js';
import { TypedEmitter } from '../../events.js';
import { DeliveredWindow } from '../delivered-window.js';
import type { Flow, FlowDeps, Role } from '../flow.js';
import { scheduledFailureLevel } from '../job-errors.js';
import { onePollAtATime, type PolledSource, polledSource, pollRuns, type StartedFlow, startFlow } from '../lifecycle.js';
import type { PollHistory } from '../poll-source.js';
import { forgetLogged, RedisBoundMemory } from '../redis-identity.js';
import { pollKitChanges, refreshKits, resetFirstSalesPull } from './listing/index.js';
import { pollSource } from './producer.js';
import { type ReconcileOptions, reconcileWith } from './reconcile/index.js';
import { reevaluateOnStart } from './reevaluate.js';
import { markReread } from './reread-gate.js';
import { type InventoryRuntime, openInventoryRuntime } from './runtime.js';
import { collectHeld, deletionsOf, diffRuns, runDiff } from './snapshot/index.js';
import type { DiffReport, InventoryEvents, KitChangesReport, KitsReport, PollReport, ReconcileReport, ReevaluateReport } from './types.js';
import { createInventoryWorker } from './worker.js';

/** A running inventory flow. */
export interface InventoryFlow extends Flow {
  readonly events: TypedEmitter<InventoryEvents>;
  /** The flow's BullMQ workers (none in the producer role), for the daemon's watchdog. */
  readonly workers: readonly Worker[];
  /** What became of each cron tick on this instance (producer roles), with the tick's fire time. */
  readonly ticks?: StartedFlow<InventoryRuntime>['ticks'];
  /** Polls one source now (as its cron tick would), on this instance. */
  poll(source: string): Promise<PollReport>;
  /** Runs the snapshot diff of one source now (as its `diff.schedule` would), on this instance. */
  diff(source: string): Promise<DiffReport>;
  /** Reads one kits source (`inventory.kits`) now, as its schedule would, on this instance. */
  kits(source: string): Promise<KitsReport>;
  /** Polls one kits source's `changes` query now, as its `changesSchedule` would, on this instance. */
  kitChanges(source: string): Promise<KitChangesReport>;
  /** Runs a reconcile now with this instance's sources (none in the worker role: use `runReconcile`). */
  reconcile(options?: ReconcileOptions): Promise<ReconcileReport>;
  /**
   * The pass at start that queues the targets a settings change affects (`reevaluate.ts`): its report,
   * or undefined when another process ran it or it failed (logged; it runs again at the next start).
   */
  readonly reevaluated: Promise<ReevaluateReport | undefined>;
}

/** Starts the producer (cron tasks), the worker, or both, as `role` says. */
export async function startInventoryFlow(deps: FlowDeps, { role }: { role: Role }): Promise<InventoryFlow> {
  const events = new TypedEmitter<InventoryEvents>();
  const { config } = deps;
  // Per source, what its overlap window already delivered and when its last complete poll began (bounds
  // the next overlap), for the life of the flow; dropped when Redis is no longer the one it was learned
  // from (a failover, a restart that lost writes: ../redis-identity.ts).
  const memories = new Map<string, RedisBoundMemory<{ window: DeliveredWindow; history: PollHistory }>>();
  const memoryOf = (name: string): RedisBoundMemory<{ window: DeliveredWindow; history: PollHistory }> => {
    let memory = memories.get(name);
    if (!memory) {
      const sourceConfig = config.inventory.sources.find((source) => source.name === name);
      const overlapMs = sourceConfig && 'overlapMs' in sourceConfig ? sourceConfig.overlapMs : 0;
      memory = new RedisBoundMemory(() => ({ window: new DeliveredWindow(overlapMs), history: {} }));
      memories.set(name, memory);
    }
    return memory;
  };
  const serial = onePollAtATime();
  const pollWith = (rt: InventoryRuntime, sources: ReadonlyMap<string, PolledSource>) => (name: string): Promise<PollReport> => {
    const { source, limit, initialCursor } = polledSource('inventory', sources, name);
    return serial(name, async () => {
      const memory = memoryOf(name);
      const { window, history } = await memory.current(rt.redis, config.redis.prefix, (change) => forgetLogged(rt, 'inventory', name, change));
      const report = await pollSource(rt, source, { limit, initialCursor, window, history });
      // Workers that saw a new master wait for this before writing (reread-gate.ts).
      if (memory.identity !== undefined) await markReread(rt.redis, config.redis.prefix, name, memory.identity);
      await deletionsOf(rt, sources, name);
      return report;
    });
  };
  const diffWith = (rt: InventoryRuntime, sources: ReadonlyMap<string, PolledSource>) => (name: string, signal?: AbortSignal): Promise<DiffReport> =>
    serial(name, () => runDiff(rt, sources, name, signal));
  // Kits sources run one at a time (each rewrites the shared catalog), and apart from the stock sources.
  const kitsWith = (rt: InventoryRuntime) => (name: string): Promise<KitsReport> => {
    const kitSource = config.inventory.kits.find((source) => source.name === name);
    if (!kitSource) return Promise.reject(new Error(`no kits source named ${name}`));
    return serial('inventory.kits', () => refreshKits(rt, kitSource));
  };
  // A kits source's change feed runs in the same line as its snapshot reads: both rewrite the catalog.
  const kitChangesWith = (rt: InventoryRuntime) => (name: string): Promise<KitChangesReport> => {
    const kitSource = config.inventory.kits.find((source) => source.name === name);
    if (kitSource?.kind !== 'sql' || kitSource.changes === undefined) return Promise.reject(new Error(`no kits source named ${name} with a changes query`));
    return serial('inventory.kits', () => pollKitChanges(rt, kitSource));
  };
  const reconcileWithSources = (rt: InventoryRuntime, sources: ReadonlyMap<string, PolledSource>) => (options: ReconcileOptions = {}) =>
    reconcileWith(rt, [...sources.values()].map((entry) => entry.source), options);
  // Before this process's workers start: its kits wait for its own first complete sales pull.
  if (role !== 'worker' && (await resetFirstSalesPull(deps.connect, config))) {
    deps.logger.child({ component: 'inventory' }).info('kits wait for this producer\'s first complete sales pull: sales taken while no producer ran are not reserved yet');
  }
  const flow = await startFlow<InventoryRuntime>({
    role,
    openRuntime: () => openInventoryRuntime(deps, { events }),
    sources: {
      configs: config.inventory.sources.filter((source) => source.enabled),
      open: (sourceConfig, rt) => createSource(sourceConfig, { fields: INVENTORY_FIELDS, logger: rt.logger }),
    },
    worker: (rt, connection) => createInventoryWorker(rt, connection),
    schedule: (rt, sources) => {
      const reconcile = reconcileWithSources(rt, sources);
      const runs = pollRuns('inventory', sources, pollWith(rt, sources), (source, error) => {
        rt.logger.error({ source, err: error }, 'inventory poll failed; its cursor did not move');
        events.emit('inventory:poll:failed', { source, error });
      });
      runs.push(...diffRuns(rt, sources, diffWith(rt, sources)));
      for (const kitSource of config.inventory.kits.filter((source) => source.enabled && source.schedule !== undefined)) {
        runs.push({
          name: `inventory:kits:${kitSource.name}`,
          expression: kitSource.schedule ?? '',
          run: () =>
            kitsWith(rt)(kitSource.name).then(
              () => undefined,
              (error: Error) => {
                rt.logger.error({ source: kitSource.name, err: error }, 'kits source failed; the last complete composition is kept');
                events.emit('inventory:kits:failed', { source: kitSource.name, error });
              },
            ),
        });
      }
      // Polled on its changesSchedule, else on the components' poll (the first inventory source's schedule).
      const stockSchedule = config.inventory.sources.find((source) => source.enabled && source.schedule !== undefined)?.schedule;
      for (const kitSource of config.inventory.kits) {
        if (!kitSource.enabled || kitSource.kind !== 'sql' || kitSource.changes === undefined) continue;
        const expression = kitSource.changesSchedule ?? stockSchedule;
        if (expression === undefined) continue;
        runs.push({
          name: `inventory:kits:changes:${kitSource.name}`,
          expression,
          run: () =>
            kitChangesWith(rt)(kitSource.name).then(
              () => undefined,
              (error: Error) => {
                rt.logger.error({ source: kitSource.name, err: error }, 'kits source changes poll failed; its cursor did not move past what was applied');
                events.emit('inventory:kits:changes:failed', { source: kitSource.name, error });
              },
            ),
        });
      }
      const reconcileSchedule = config.inventory.reconcile.schedule;
      if (reconcileSchedule === null) return runs;
      return [
        ...runs,
        {
          name: 'inventory:reconcile',
          expression: reconcileSchedule,
          run: (signal) =>
            reconcile({ signal }).then(
              () => undefined,
              (error: Error) => {
                if (signal.aborted) return;
                rt.logger[scheduledFailureLevel(error)]({ err: error }, 'scheduled inventory reconcile failed');
                events.emit('inventory:reconcile:failed', { error });
              },
            ),
        },
      ];
    },
  });
  const stopCollecting = collectHeld(flow.rt, flow.sources);
  // In the background: a large catalog takes a while to walk, and the flow works meanwhile.
  const stopping = new AbortController();
  const reevaluated = reevaluateOnStart(flow.rt, stopping.signal).catch((error: unknown) => {
    if (!stopping.signal.aborted) flow.rt.logger.error({ err: error }, 'inventory settings check at start failed; it runs again at the next start');
    return undefined;
  });
  return {
    name: 'inventory',
    queues: [flow.rt.queue, flow.rt.rejects.queue, flow.rt.storeRejects.queue],
    events,
    workers: flow.workers,
    ...(flow.ticks ? { ticks: flow.ticks } : {}),
    poll: pollWith(flow.rt, flow.sources),
    diff: diffWith(flow.rt, flow.sources),
    kits: kitsWith(flow.rt),
    kitChanges: kitChangesWith(flow.rt),
    reconcile: reconcileWithSources(flow.rt, flow.sources),
    reevaluated,
    close: async (timeoutMs) => {
      stopCollecting();
      stopping.abort();
      await reevaluated;
      return flow.close(timeoutMs);
    },
  };
}
