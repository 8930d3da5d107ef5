/**
 * The reconcile: the ERP's full current set against the store's inventory, field by field, and only
 * the differences queued. The ERP side is streamed (`source.snapshot()`); the store side is held in a
 * Map of just the compared fields, so 100,000 SKUs fit in a few hundred MB.
 *
 * Differences are merged as forced pending values: change detection would otherwise skip a value
 * the store once acknowledged but no longer has. The version rule still applies: a snapshot row
 * without a cursor takes the version the store last took for that field, so it may be resent but
 * never overrides a newer change.
 *
 * Sites: the store is read on every site the configuration writes to (`inventory.reconcile.siteIds`,
 * `store.siteId`, and each SiteId the ERP records name, read when first met). A SKU found on none of
 * them is looked up by code on the whole store: one living on another site is reported "on site N",
 * neither missing nor created. A store item that does not fit its schema is parked in `store-rejects`.
 */
import { cursorToVersion, isTimestampCursor } from '../../erp/cursor.js';
import { INVENTORY_FIELDS } from '../../erp/fields.js';
import { createSource } from '../../erp/index.js';
import type { ChangeSource, SourceRecord } from '../../erp/types.js';
import { ConfigError, formatIssue } from '../../errors.js';
import type { InventoryGetOptions } from '../../store/inventory.js';
import type { RecordReject } from '../../store/records.js';
import type { InventoryItem } from '../../store/schemas/index.js';
import { validateInventoryUpdate } from '../../store/validation.js';
import type { FlowDeps } from '../flow.js';
import { sameValue } from './compare.js';
import { enqueueSkus, PRIORITY } from './enqueue.js';
import { LOCAL_FIELDS, localFieldIssues, publishedStock, SAFETY_FIELD, safetyStockOf, storeFields } from './published-stock.js';
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

/** The fields a reconcile compares: what an ERP may provide for the store, except the key. */
const COMPARED = Object.keys(INVENTORY_FIELDS).filter((field) => field !== 'Code' && !LOCAL_FIELDS.has(field));

/** Store reads in flight when the store is read item by item (`skus`). */
const LOOKUP_CONCURRENCY = 8;

/** One store item reduced to what is compared. */
interface StoreView {
  siteId: number | null;
  fields: Record<string, unknown>;
  /** Fields whose store value has a shape the ERP's cannot be compared with (Taxes as an object): not compared. */
  opaque?: string[];
}

/** The store as read so far: Code → its views (one per site read), and the sites read. */
interface StoreIndex {
  items: Map<string, StoreView[]>;
  count: number;
  sites: Array<number | null>;
  /** Items the store sent that did not fit (parked unless dry run). */
  rejects: RecordReject[];
}

const SCALAR_TYPES = new Set(['string', 'int', 'decimal', 'bool']);

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
  const store: StoreIndex = { items: new Map(), count: 0, sites: [], rejects: [] };
  for (const siteId of configuredSites(rt)) await readSite(rt, store, siteId, options.skus);
  const report: ReconcileReport = {
    dryRun: options.dryRun === true,
    sources: withSnapshot.map((source) => source.name),
    sites: store.sites,
    erpRecords: 0,
    storeItems: 0,
    differences: 0,
    perField: {},
    itemsWithDifferences: 0,
    sample: [],
    missingOnStore: 0,
    missingSample: [],
    onOtherSites: 0,
    otherSiteSample: [],
    rejected: 0,
    storeRejected: 0,
    queued: 0,
  };
  const differing = new Set<string>();
  // SKUs on none of the sites read, with what to create if they prove missing everywhere.
  const absent = new Map<string, Array<{ source: string; record: SourceRecord; fields: string[] }>>();
  // The store is compared with the published stock, so a reconcile never undoes a reservation.
  const observedAt = rt.now();
  const reservations = await rt.reservations.all();
  const expected = (record: SourceRecord, sku: string): Record<string, unknown> => {
    const values = storeFields(record.fields);
    if (typeof values.Stock !== 'number') return values;
    const version = cursorToVersion(record.cursor);
    const figure = { version: version ?? observedAt, at: observedAt, observedAt, ...(isTimestampCursor(record.cursor) && version !== null ? { changedAt: version } : {}) };
    const safety = safetyStockOf({ value: record.fields[SAFETY_FIELD] }, rt.config.inventory.safetyStock);
    values.Stock = publishedStock(values.Stock, figure, reservations.get(sku) ?? { version: 0, entries: [] }, safety).published;
    return values;
  };
  const priorities = new Map<string, number>();

  for (const source of withSnapshot) {
    for await (const chunk of source.snapshot!()) {
      options.signal?.throwIfAborted();
      await readNewSites(rt, store, chunk, options.skus);
      const toQueue: Array<{ record: SourceRecord; sku: string; fields: string[] }> = [];
      for (const record of chunk) {
        const sku = typeof record.fields.Code === 'string' ? record.fields.Code : undefined;
        if (sku === undefined || (skuFilter && !skuFilter.has(sku))) continue;
        report.erpRecords++;
        if (validateInventoryUpdate({ InternalId: 0, ...storeFields(record.fields) }, sku).length > 0 || localFieldIssues(record, sku).length > 0) {
          report.rejected++;
          continue;
        }
        const views = store.items.get(sku);
        const values = expected(record, sku);
        const fields = Object.keys(values).filter((field) => field !== 'Code');
        if (!views) {
          const pending = absent.get(sku) ?? [];
          if (rt.config.inventory.createMissing) pending.push({ source: source.name, record, fields });
          absent.set(sku, pending);
          continue;
        }
        const changed = diffRecord(report, sku, values, fields, views, sampleSize);
        if (changed.length > 0) differing.add(sku);
        const queued = options.force ? fields : changed;
        if (queued.length > 0) {
          // The worker recomputes the published stock from the ERP's figure and safety stock.
          toQueue.push({ record, sku, fields: queued.includes('Stock') && SAFETY_FIELD in record.fields ? [...queued, SAFETY_FIELD] : queued });
          priorities.set(sku, reconcilePriority(queued, values, views));
        }
      }
      report.queued += report.dryRun ? new Set(toQueue.map(({ sku }) => sku)).size : await queueForced(rt, source.name, toQueue, priorities);
      options.onProgress?.(report.erpRecords, Math.max(report.erpRecords, store.count));
    }
  }
  // An item the store sent malformed is there, only unreadable: neither missing (nor created) nor compared.
  const unreadable = new Set(store.rejects.flatMap((reject) => (reject.id === null ? [] : [reject.id])));
  for (const sku of unreadable) absent.delete(sku);
  const elsewhere = store.sites.includes(null) ? new Map<string, number[]>() : await findElsewhere(rt, store, [...absent.keys()]);
  const missing: Array<{ source: string; record: SourceRecord; sku: string; fields: string[] }> = [];
  for (const [sku, pending] of absent) {
    const siteIds = elsewhere.get(sku);
    if (siteIds) {
      report.onOtherSites++;
      if (report.otherSiteSample.length < sampleSize) report.otherSiteSample.push({ sku, siteIds });
      continue;
    }
    report.missingOnStore++;
    if (report.missingSample.length < sampleSize) report.missingSample.push(sku);
    for (const entry of pending) missing.push({ ...entry, sku });
  }
  for (const source of new Set(missing.map((entry) => entry.source))) {
    const toCreate = missing.filter((entry) => entry.source === source);
    report.queued += report.dryRun ? new Set(toCreate.map(({ sku }) => sku)).size : await queueForced(rt, source, toCreate);
  }
  report.storeItems = store.count;
  report.storeRejected = new Set(store.rejects.map((reject) => reject.id ?? reject.issues.map(formatIssue).join())).size;
  if (!report.dryRun) {
    await rt.storeRejects.park(store.rejects);
    await rt.storeRejects.clear('inventory', store.items.keys());
  }
  report.itemsWithDifferences = differing.size;
  if (!skuFilter) {
    // A partial run (some SKUs) says nothing about the drift of the whole catalogue.
    rt.metrics.reconcileDrift.reset();
    for (const field of COMPARED) rt.metrics.reconcileDrift.set({ field }, report.perField[field] ?? 0);
  }
  rt.logger.info({ ...report, sample: undefined, missingSample: undefined }, 'inventory reconcile done');
  rt.events.emit('inventory:reconcile:done', report);
  return report;
}

/** Sites the configuration writes to: `inventory.reconcile.siteIds` and `store.siteId`; none: no filter (null). */
function configuredSites(rt: InventoryRuntime): Array<number | null> {
  const sites = new Set<number>(rt.config.inventory.reconcile.siteIds);
  if (rt.config.store.siteId !== undefined) sites.add(rt.config.store.siteId);
  return sites.size > 0 ? [...sites] : [null];
}

/** Reads the sites the chunk's records name (SiteId) that were not read yet; an unfiltered read has them all. */
async function readNewSites(rt: InventoryRuntime, store: StoreIndex, chunk: readonly SourceRecord[], skus: readonly string[] | undefined): Promise<void> {
  if (store.sites.includes(null)) return;
  for (const record of chunk) {
    const siteId = record.fields.SiteId;
    if (typeof siteId === 'number' && Number.isInteger(siteId) && siteId > 0 && !store.sites.includes(siteId)) {
      await readSite(rt, store, siteId, skus);
    }
  }
}

/** The store view of one item: the compared fields, those of a shape that cannot be compared set apart. */
function viewOf(siteId: number | null, item: InventoryItem): StoreView {
  const fields: Record<string, unknown> = {};
  const opaque: string[] = [];
  for (const field of COMPARED) {
    const value = (item as Record<string, unknown>)[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'object' && SCALAR_TYPES.has(INVENTORY_FIELDS[field]?.type ?? '')) opaque.push(field);
    else fields[field] = value;
  }
  return opaque.length > 0 ? { siteId, fields, opaque } : { siteId, fields };
}

/** Reads one site of the store (or the items of `skus` on it) into `store`. */
async function readSite(rt: InventoryRuntime, store: StoreIndex, siteId: number | null, skus: readonly string[] | undefined): Promise<void> {
  store.sites.push(siteId);
  const add = (item: InventoryItem): void => {
    const view = viewOf(siteId, item);
    const views = store.items.get(item.Code);
    if (views) views.push(view);
    else store.items.set(item.Code, [view]);
    store.count++;
  };
  const query = siteId === null ? {} : { siteId };
  const read = { onReject: (reject: RecordReject) => void store.rejects.push(reject) };
  if (skus === undefined) {
    await rt.store.inventory.each(query, add, read);
    return;
  }
  await lookUp(rt, skus, query, read, add);
}

/** Reads the items of `codes`, a few at a time, keeping only the item asked for (the store may ignore `code`). */
async function lookUp(
  rt: InventoryRuntime,
  codes: readonly string[],
  query: { siteId?: number },
  read: InventoryGetOptions,
  visit: (item: InventoryItem) => void,
): Promise<void> {
  const queue = [...new Set(codes)];
  await Promise.all(
    Array.from({ length: Math.min(LOOKUP_CONCURRENCY, queue.length) }, async () => {
      for (let code = queue.pop(); code !== undefined; code = queue.pop()) {
        for (const item of await rt.store.inventory.get({ ...query, code }, read)) if (item.Code === code) visit(item);
      }
    }),
  );
}

/** The sites, other than those read, on which the store has each of `skus` (looked up by code, any site). */
async function findElsewhere(rt: InventoryRuntime, store: StoreIndex, skus: readonly string[]): Promise<Map<string, number[]>> {
  const found = new Map<string, number[]>();
  const read = { onReject: (reject: RecordReject) => void store.rejects.push(reject) };
  await lookUp(rt, skus, {}, read, (item) => {
    const siteId = item.SiteId;
    if (typeof siteId !== 'number' || store.sites.includes(siteId)) return;
    found.set(item.Code, [...new Set([...(found.get(item.Code) ?? []), siteId])]);
  });
  return found;
}

/** Compares one ERP record with the store's views of its SKU; counts into `report`; returns the differing fields. */
function diffRecord(
  report: ReconcileReport,
  sku: string,
  values: Record<string, unknown>,
  fields: readonly string[],
  views: readonly StoreView[],
  sampleSize: number,
): string[] {
  const changed = new Set<string>();
  for (const field of fields) {
    for (const view of views) {
      if (view.opaque?.includes(field)) continue;
      if (sameValue(values[field], view.fields[field])) continue;
      changed.add(field);
      report.differences++;
      report.perField[field] = (report.perField[field] ?? 0) + 1;
      if (report.sample.length < sampleSize) report.sample.push(difference(sku, field, values[field], view));
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
  priorities: ReadonlyMap<string, number> = new Map(),
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
          observedAt: at,
          ...(record.cursor === null ? {} : { cursor: record.cursor }),
          ...(isTimestampCursor(record.cursor) && version !== null ? { changedAt: version } : {}),
          force: true,
        };
      }
      return { sku, entries };
    }),
  );
  return enqueueSkus(
    rt.queue,
    toQueue.map(({ sku }) => sku),
    { force: true, priorities },
  );
}

/** A store showing more than may be sold is fixed first, then one showing less, then other fields. */
function reconcilePriority(fields: readonly string[], values: Record<string, unknown>, views: readonly StoreView[] | undefined): number {
  if (!fields.includes('Stock')) return PRIORITY.other;
  const shown = views?.map((view) => Number(view.fields.Stock));
  return shown?.some((stock) => !(stock <= Number(values.Stock))) ? PRIORITY.decrease : PRIORITY.increase;
}
