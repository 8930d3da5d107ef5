/**
 * The sales flow: a scheduled pull (producer) that queues the store's new sales, and a worker that
 * exports each to the ERP and acknowledges it on the store; started and stopped by the flow lifecycle
 * (../lifecycle.ts). Also `exportOneSale`, the same work for one
 * sale outside the queue (CLI `storesync sales export`).
 */
import type { Worker } from 'bullmq';

import type { SalesSink } from '../../erp/sinks/index.js';
import { StoreSyncError } from '../../errors.js';
import { TypedEmitter } from '../../events.js';
import type { ScheduledRun } from '../../queue/schedule.js';
import type { Flow, FlowDeps, Role } from '../flow.js';
import type { ReservationSync } from '../inventory/listing/index.js';
import { scheduledFailureLevel } from '../job-errors.js';
import { startFlow } from '../lifecycle.js';
import { exportSale } from './export-sale.js';
import { runPull } from './pull.js';
import { pullSites } from './pull-sites.js';
import { openSalesRuntime, pullSiteId, salesEnabled, type SalesRuntime } from './runtime.js';
import type { SaleOutcome, SalesEvents } from './types.js';
import { startSalesWorker } from './worker.js';

/** Options of `startSalesFlow`. */
export interface SalesFlowOptions {
  role: Role;
  /** A sink to use instead of `sales.sink` (the caller closes it). */
  sink?: SalesSink;
}

/** A running sales flow. */
export interface SalesFlow extends Flow {
  readonly events: TypedEmitter<SalesEvents>;
  /** The flow's BullMQ workers (none in the producer role), for the daemon's watchdog. */
  readonly workers: readonly Worker[];
}

/**
 * Starts the flow. Without a sink (none passed, no `sales.sink` configured) sales sync is off: nothing
 * is pulled, exported or acknowledged, and the flow is an idle one. Workers check the sink first
 * (missing interface tables fail the start with a message saying to run `storesync migrate`). With
 * `sales.enabled: false` nothing is scheduled, but the worker still runs jobs queued on demand.
 */
export async function startSalesFlow(deps: FlowDeps, options: SalesFlowOptions): Promise<SalesFlow> {
  if (!options.sink && !salesEnabled(deps.config)) {
    deps.logger.child({ component: 'sales' }).info('sales sync off: no sales.sink configured');
    return { name: 'sales', queues: [], events: new TypedEmitter<SalesEvents>(), workers: [], close: async () => {} };
  }
  const flow = await startFlow<SalesRuntime>({
    role: options.role,
    openRuntime: () => openSalesRuntime(deps, options.sink ? { sink: options.sink } : {}),
    checkWorker: checkSink,
    worker: (rt, connection) => startSalesWorker(rt, connection),
    schedule: (rt) => [
      ...(deps.config.sales.enabled
        ? [
            {
              name: 'sales-pull',
              expression: deps.config.sales.pull.schedule,
              run: async () => {
                try {
                  rt.events.emit('sales:pull:done', await runPull(rt));
                } catch (error) {
                  rt.logger[scheduledFailureLevel(error)]({ err: (error as Error).message }, 'sales pull failed; the next one covers the same window');
                  rt.events.emit('sales:pull:failed', { error: error as Error });
                }
              },
            },
          ]
        : []),
      ...(rt.reservations ? [reservationCheck(rt, rt.reservations)] : []),
    ],
  });
  const scheduled = options.role !== 'worker' && deps.config.sales.enabled;
  flow.rt.logger.info({ role: options.role, siteIds: pullSites(deps.config).siteIds, sink: options.sink?.kind ?? deps.config.sales.sink?.kind, scheduled }, 'sales flow started');

  return {
    name: 'sales',
    queues: [flow.rt.queue, flow.rt.storeRejects.queue],
    events: flow.rt.events,
    workers: flow.workers,
    close: flow.close,
  };
}

/** The scheduled reservation round (`inventory.reservations.schedule`). */
function reservationCheck(rt: SalesRuntime, reservations: ReservationSync): ScheduledRun {
  return {
    name: 'inventory:reservations',
    expression: rt.config.inventory.reservations.schedule,
    run: async () => {
      try {
        const report = await reservations.check(rt.sink, () => rt.state.pendingKeys());
        rt.events.emit('reservations:checked', report);
      } catch (error) {
        rt.logger[scheduledFailureLevel(error)]({ err: (error as Error).message }, 'reservation check failed; the next one tries again');
        rt.events.emit('reservations:check:failed', { error: error as Error });
      }
    },
  };
}

/**
 * Fails the start on a sink that cannot work as configured (missing tables), but not on an ERP that is
 * only unreachable now: the jobs retry, and an ERP restart must not stop the whole daemon.
 */
async function checkSink(rt: SalesRuntime): Promise<void> {
  try {
    await rt.sink.check();
  } catch (error) {
    if (!(error instanceof StoreSyncError && error.retryable)) throw error;
    rt.logger.warn({ err: error.message, sink: rt.sink.kind }, 'the sales sink cannot be checked now; exports retry until it answers');
  }
}

/** Options of `exportOneSale`. */
export interface ExportOneSaleOptions {
  /** Export even if it was exported before (the sink's own idempotency still applies). */
  force?: boolean;
  /**
   * The sale's site (default: `sales.pull.siteId`, else `store.siteId` when `inventory.sites` is empty,
   * else the sale's own SiteId as the store gives it).
   */
  siteId?: number;
  /** A sink to use instead of `sales.sink` (the caller closes it). */
  sink?: SalesSink;
}

/** Exports and acknowledges one sale now, outside the queue; returns what was done. */
export async function exportOneSale(deps: FlowDeps, saleId: number, options: ExportOneSaleOptions = {}): Promise<SaleOutcome> {
  const rt = openSalesRuntime(deps, options.sink ? { sink: options.sink } : {});
  try {
    await rt.sink.check();
    let siteId = options.siteId ?? pullSiteId(deps.config);
    siteId ??= (await rt.store.sales.get(saleId)).SiteId ?? 0;
    return await exportSale(rt, { siteId, saleId }, { force: options.force ?? false });
  } finally {
    await rt.close();
  }
}
