/**
 * The reconcile: the ERP's full current set against the store's inventory, field by field, and only
 * the differences queued. The ERP side is streamed (`source.snapshot()`); the store side is held in a
 * Map of just the compared fields, so 100,000 SKUs fit in a few hundred MB.
 *
 * Differences are merged as forced pending values: change detection would otherwise skip a value
 * the store once acknowledged but no longer has. The version rule still applies: a snapshot row
 * without a cursor takes the version the store last took for that field, so it may be resent but
 * never overrides a newer change.
 */
import { cursorToVersion } from '../../erp/cursor.js';
import { INVENTORY_FIELDS } from '../../erp/fields.js';
import { createSource } from '../../erp/index.js';
import type { ChangeSource, SourceRecord } from '../../erp/types.js';
import { ConfigError } from '../../errors.js';
import type { InventoryItem } from '../../store/schemas/index.js';
import { validateInventoryUpdate } from '../../store/validation.js';
import type { FlowDeps } from '../flow.js';
import { sameValue } from './compare.js';
import { enqueueSkus } from './enqueue.js';
import { type InventoryRuntime, openInventoryRuntime } from './runtime.js';
import type { FieldDifference, PendingEntry, ReconcileReport } from './types.js';

/** Options of a reconcile run. */
export interface ReconcileOptions {
  /** Only this source (by name); default: every enabled source with a snapshot. */
  source?: string;
  /** Only these SKUs (the store is then read item by item). */
  skus?: readonly string[];
  /** Compare and report, write nothing. */
  dryRun?: boolean;
  /** Queue every ERP field, equal or not (a full push). */
  force?: boolean;
  /** Called after each ERP chunk: records done, and an estimate of the total (the store's count). */
  onProgress?: (done: number, total: number) => void;
  /** Differences and missing SKUs listed in the report (default 20). */
  sampleSize?: number;
  /** Stops the run between two ERP chunks (shutdown); what was queued so far stays queued. */
  signal?: AbortSignal;
}

/** The fields a reconcile compares: what an ERP may provide, except the key. */
const COMPARED = Object.keys(INVENTORY_FIELDS).filter((field) => field !== 'Code');

/** Store reads in flight when the store is read item by item (`skus`). */
const LOOKUP_CONCURRENCY = 8;

/** One store item reduced to what is compared. */
interface StoreView {
  siteId: number | null;
  fields: Record<string, unknown>;
}

/** Runs a reconcile with its own connection and sources; see `reconcileWith`. */
export async function runReconcile(deps: FlowDeps, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const configs = deps.config.inventory.sources.filter((s) => (options.source === undefined ? s.enabled : s.name === options.source));
  if (options.source !== undefined && configs.length === 0) {
    throw new ConfigError([`inventory.sources: no source named "${options.source}"`]);
  }
  const rt = openInventoryRuntime(deps, { readOnly: options.dryRun === true });
  const sources = configs.map((config) => createSource(config, { fields: INVENTORY_FIELDS, logger: rt.logger }));
  try {
    return await reconcileWith(rt, sources, options);
  } finally {
    await Promise.allSettled(sources.map((source) => source.close()));
    await rt.close();
  }
}

/** Compares the snapshots of `sources` with the store and queues the differences (unless dry run). */
export async function reconcileWith(rt: InventoryRuntime, sources: readonly ChangeSource[], options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const withSnapshot = sources.filter((source) => source.snapshot !== undefined);
  if (options.source !== undefined && withSnapshot.length === 0) {
    throw new ConfigError([`inventory.sources.${options.source}: this source has no snapshot to reconcile from`]);
  }
  const sampleSize = options.sampleSize ?? 20;
  const skuFilter = options.skus ? new Set(options.skus) : undefined;
  const sites = siteIds(rt);
  const store = await readStore(rt, sites, options.skus);
  const report: ReconcileReport = {
    dryRun: options.dryRun === true,
    sources: withSnapshot.map((source) => source.name),
    sites,
    erpRecords: 0,
    storeItems: store.count,
    differences: 0,
    perField: {},
    itemsWithDifferences: 0,
    sample: [],
    missingOnStore: 0,
    missingSample: [],
    rejected: 0,
    queued: 0,
  };
  const differing = new Set<string>();
  const missing = new Set<string>();

  for (const source of withSnapshot) {
    for await (const chunk of source.snapshot!()) {
      options.signal?.throwIfAborted();
      const toQueue: Array<{ record: SourceRecord; sku: string; fields: string[] }> = [];
      for (const record of chunk) {
        const sku = typeof record.fields.Code === 'string' ? record.fields.Code : undefined;
        if (sku === undefined || (skuFilter && !skuFilter.has(sku))) continue;
        report.erpRecords++;
        if (validateInventoryUpdate({ InternalId: 0, ...record.fields }, sku).length > 0) {
          report.rejected++;
          continue;
        }
        const views = store.items.get(sku);
        const fields = Object.keys(record.fields).filter((field) => field !== 'Code');
        if (!views) {
          if (!missing.has(sku)) {
            missing.add(sku);
            if (report.missingSample.length < sampleSize) report.missingSample.push(sku);
          }
          if (rt.config.inventory.createMissing) toQueue.push({ record, sku, fields });
          continue;
        }
        const changed = diffRecord(report, sku, record, fields, views, sampleSize);
        if (changed.length > 0) differing.add(sku);
        const queued = options.force ? fields : changed;
        if (queued.length > 0) toQueue.push({ record, sku, fields: queued });
      }
      report.queued += report.dryRun ? new Set(toQueue.map(({ sku }) => sku)).size : await queueForced(rt, source.name, toQueue);
      options.onProgress?.(report.erpRecords, Math.max(report.erpRecords, store.count));
    }
  }
  report.itemsWithDifferences = differing.size;
  report.missingOnStore = missing.size;
  if (!skuFilter) {
    // A partial run (some SKUs) says nothing about the drift of the whole catalogue.
    rt.metrics.reconcileDrift.reset();
    for (const field of COMPARED) rt.metrics.reconcileDrift.set({ field }, report.perField[field] ?? 0);
  }
  rt.logger.info({ ...report, sample: undefined, missingSample: undefined }, 'inventory reconcile done');
  rt.events.emit('inventory:reconcile:done', report);
  return report;
}

/** Sites to read: `inventory.reconcile.siteIds`, else `store.siteId`, else no filter (null). */
function siteIds(rt: InventoryRuntime): Array<number | null> {
  const configured = rt.config.inventory.reconcile.siteIds;
  if (configured.length > 0) return [...configured];
  return [rt.config.store.siteId ?? null];
}

/** Reads the store's items into a Map of Code → the compared fields, per site. */
async function readStore(
  rt: InventoryRuntime,
  sites: ReadonlyArray<number | null>,
  skus: readonly string[] | undefined,
): Promise<{ items: Map<string, StoreView[]>; count: number }> {
  const items = new Map<string, StoreView[]>();
  let count = 0;
  const add = (siteId: number | null, item: InventoryItem): void => {
    const fields: Record<string, unknown> = {};
    for (const field of COMPARED) {
      const value = (item as Record<string, unknown>)[field];
      if (value !== undefined && value !== null) fields[field] = value;
    }
    const views = items.get(item.Code);
    if (views) views.push({ siteId, fields });
    else items.set(item.Code, [{ siteId, fields }]);
    count++;
  };
  for (const siteId of sites) {
    const query = siteId === null ? {} : { siteId };
    if (skus === undefined) {
      await rt.store.inventory.each(query, (item) => add(siteId, item));
      continue;
    }
    const queue = [...new Set(skus)];
    await Promise.all(
      Array.from({ length: Math.min(LOOKUP_CONCURRENCY, queue.length) }, async () => {
        for (let code = queue.pop(); code !== undefined; code = queue.pop()) {
          // The store may ignore `code` and answer more: keep only the item asked for.
          for (const item of await rt.store.inventory.get({ ...query, code })) if (item.Code === code) add(siteId, item);
        }
      }),
    );
  }
  return { items, count };
}

/** Compares one ERP record with the store's views of its SKU; counts into `report`; returns the differing fields. */
function diffRecord(
  report: ReconcileReport,
  sku: string,
  record: SourceRecord,
  fields: readonly string[],
  views: readonly StoreView[],
  sampleSize: number,
): string[] {
  const changed = new Set<string>();
  for (const field of fields) {
    for (const view of views) {
      if (sameValue(record.fields[field], view.fields[field])) continue;
      changed.add(field);
      report.differences++;
      report.perField[field] = (report.perField[field] ?? 0) + 1;
      if (report.sample.length < sampleSize) report.sample.push(difference(sku, field, record.fields[field], view));
    }
  }
  return [...changed];
}

function difference(sku: string, field: string, erp: unknown, view: StoreView): FieldDifference {
  return { sku, field, erp, store: view.fields[field] ?? null, ...(view.siteId === null ? {} : { siteId: view.siteId }) };
}

/** Merges the chosen fields as forced pending values and queues their SKUs. */
async function queueForced(
  rt: InventoryRuntime,
  source: string,
  toQueue: ReadonlyArray<{ record: SourceRecord; sku: string; fields: string[] }>,
): Promise<number> {
  if (toQueue.length === 0) return 0;
  const at = rt.now();
  const unversioned = toQueue.filter(({ record }) => cursorToVersion(record.cursor) === null).map(({ sku }) => sku);
  const applied = await rt.state.appliedVersions(unversioned);
  await rt.state.merge(
    toQueue.map(({ record, sku, fields }) => {
      const version = cursorToVersion(record.cursor);
      const entries: Record<string, PendingEntry> = {};
      for (const field of fields) {
        entries[field] = {
          value: record.fields[field],
          version: version ?? applied.get(sku)?.get(field) ?? 0,
          at,
          source,
          force: true,
        };
      }
      return { sku, entries };
    }),
  );
  return enqueueSkus(
    rt.queue,
    toQueue.map(({ sku }) => sku),
    { force: true },
  );
}
