/**
 * `storesync demo --once`: one full cycle through the running daemon, each step waited for until its
 * queue is idle: the ERP exports reach the store, a reconcile from the control queue compares the
 * ERP's full export with the store and fixes the items that differ, a sales pull exports the store's
 * new sales to the file sink and acknowledges them, and a shipment update from the ERP reaches the
 * store's sale.
 */
import type { Queue } from 'bullmq';

import type { Daemon } from '../../daemon.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { Simulator } from '../../simulator/index.js';
import type { ControlJobData } from '../../sync/control/index.js';
import type { Flow } from '../../sync/flow.js';
import type { FieldDifference, ReconcileReport } from '../../sync/inventory/types.js';
import { waitFor } from '../../wait-for.js';
import { type ErpFolders, exportedSaleIds, writeShipments } from './erp-feed.js';

/** What one cycle did. */
export interface CycleReport {
  inventory: { rowsRead: number; rowsRejected: number; itemsUpdated: number };
  reconcile: {
    storeItems: number;
    erpRecords: number;
    differences: number;
    queued: number;
    sources: string[];
    /** The differences found (the first 20): SKU, field, the ERP's value and the store's before the fix. */
    sample: FieldDifference[];
  };
  sales: { exported: number; acknowledged: number; sinkDir: string };
  fulfillment: { updated: number; trackingCodes: string[] };
}

/** What a cycle runs against. */
export interface CycleContext {
  daemon: Daemon;
  simulator: Simulator;
  folders: ErpFolders;
  /** Source names in the demo config. */
  sources: { inventory: string; shipments: string };
  /** Time allowed to each step. */
  stepTimeoutMs?: number;
}

/** The queue of `flow` named `name`. */
function queueOf(flow: Flow, name: string): Queue {
  const queue = flow.queues.find((q) => q.name === name);
  if (!queue) throw new Error(`demo: flow ${flow.name} has no queue ${name}`);
  return queue;
}

/** True when `queue` has nothing waiting, running or scheduled for a retry. */
export async function queueIdle(queue: Queue): Promise<boolean> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return Object.values(counts).every((count) => count === 0);
}

/** Queues a control job and resolves with its result once it completed. */
async function runControlJob(daemon: Daemon, data: ControlJobData, timeoutMs: number): Promise<unknown> {
  const id = await daemon.control.enqueue(data);
  const job = await waitFor(
    async () => {
      const found = await daemon.control.queue.getJob(id);
      return found?.finishedOn ? found : undefined;
    },
    { timeoutMs, intervalMs: 100, message: `control job ${data.action}` },
  );
  if (job.failedReason) throw new Error(`demo: ${data.action} failed: ${job.failedReason}`);
  return job.returnvalue;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Runs the cycle; throws when a step does nothing or does not finish in time. */
export async function runDemoCycle(ctx: CycleContext): Promise<CycleReport> {
  const { daemon, simulator, folders } = ctx;
  const timeoutMs = ctx.stepTimeoutMs ?? 60_000;

  const poll = await daemon.inventory.poll(ctx.sources.inventory);
  await waitFor(() => queueIdle(queueOf(daemon.inventory, QUEUE_NAMES.inventory)), { timeoutMs, intervalMs: 100, message: 'the inventory queue to drain' });
  const itemsUpdated = new Set(simulator.writes.map((write) => write.code)).size;
  if (itemsUpdated === 0) throw new Error('demo: no ERP change reached the store');

  const reconcile = (await runControlJob(
    daemon,
    { action: 'inventory-reconcile', skus: [], dryRun: false, force: false, confirmOrphans: false, requestedBy: 'demo' },
    timeoutMs,
  )) as ReconcileReport;
  if (reconcile.differences === 0) throw new Error('demo: the reconcile found no difference between the ERP snapshot and the store');
  // Fixed means a dry-run reconcile of the same SKUs finds nothing left. It compares the store with the
  // published figure as it is now: the scheduled sales pull may reserve units of these SKUs meanwhile,
  // which changes what must be published (and queues the change) after the first reconcile's fixes.
  const fixedSkus = [...new Set(reconcile.sample.map(({ sku }) => sku))];
  await waitFor(
    async () => {
      if (!(await queueIdle(queueOf(daemon.inventory, QUEUE_NAMES.inventory)))) return false;
      const check = (await runControlJob(
        daemon,
        { action: 'inventory-reconcile', skus: fixedSkus, dryRun: true, force: false, confirmOrphans: false, requestedBy: 'demo' },
        timeoutMs,
      )) as ReconcileReport;
      return check.differences === 0;
    },
    { timeoutMs, intervalMs: 200, message: `the reconcile's fixes to reach the store (${fixedSkus.join(', ')})` },
  );

  const day = 86_400_000;
  await runControlJob(
    daemon,
    { action: 'sales-pull', from: isoDay(Date.now() - day), to: isoDay(Date.now() + day), dryRun: false, requestedBy: 'demo' },
    timeoutMs,
  );
  await waitFor(() => queueIdle(queueOf(daemon.sales, QUEUE_NAMES.sales)), { timeoutMs, intervalMs: 100, message: 'the sales queue to drain' });
  const exported = await exportedSaleIds(folders.sales);
  if (exported.length === 0) throw new Error('demo: no sale was exported to the ERP');
  const acknowledged = new Set(simulator.saleUpdates.map((update) => update.saleId)).size;

  const shipped = exported.slice(0, 3);
  // Sale updates carry the complete structure (an acknowledgement sends the current tracking code too):
  // only those after this point are the shipments'.
  const updatesBefore = simulator.saleUpdates.length;
  await writeShipments(folders.shipments, shipped);
  await daemon.fulfillment.poll(ctx.sources.shipments);
  await waitFor(() => queueIdle(queueOf(daemon.fulfillment, QUEUE_NAMES.fulfillment)), { timeoutMs, intervalMs: 100, message: 'the fulfillment queue to drain' });
  const trackingCodes = simulator.saleUpdates
    .slice(updatesBefore)
    .filter((update) => shipped.includes(update.saleId) && typeof update.fields.TrackingCode === 'string' && update.fields.TrackingCode !== '')
    .map((update) => update.fields.TrackingCode as string);
  if (trackingCodes.length === 0) throw new Error('demo: no shipment update reached the store');

  return {
    inventory: { rowsRead: poll.read, rowsRejected: poll.rejected, itemsUpdated },
    reconcile: {
      storeItems: reconcile.storeItems,
      erpRecords: reconcile.erpRecords,
      differences: reconcile.differences,
      queued: reconcile.queued,
      sources: reconcile.sources,
      sample: reconcile.sample,
    },
    sales: { exported: exported.length, acknowledged, sinkDir: folders.sales },
    fulfillment: { updated: new Set(trackingCodes).size, trackingCodes: [...new Set(trackingCodes)] },
  };
}

/** The summary printed at the end of `--once`. */
export function formatCycleReport(report: CycleReport): string {
  const { erpRecords, storeItems, differences, queued, sample } = report.reconcile;
  const skus = [...new Set(sample.map((difference) => difference.sku))].join(', ');
  const reconcile = `${erpRecords} ERP snapshot records against ${storeItems} store items: ${differences} differences (${skus}), ${queued} queued and fixed`;
  return [
    'storesync demo: one full cycle done',
    `  ERP -> store   ${report.inventory.rowsRead} rows read (${report.inventory.rowsRejected} rejected), ${report.inventory.itemsUpdated} items updated on the store`,
    `  reconcile      ${reconcile}`,
    `  sales -> ERP   ${report.sales.exported} sales exported to ${report.sales.sinkDir}, ${report.sales.acknowledged} acknowledged on the store`,
    `  fulfillment     ${report.fulfillment.updated} sales marked shipped (${report.fulfillment.trackingCodes.join(', ')})`,
    '',
  ].join('\n');
}
