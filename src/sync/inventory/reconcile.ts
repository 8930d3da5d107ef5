/**
 * The reconcile: the ERP's full current set against the store's inventory, field by field, and only
 * the differences queued. The ERP snapshot is read first and kept as the few fields it maps; the
 * store's inventory then streams past it item by item and is never held (see `reconcileWith`).
 *
 * Differences are merged as forced pending values: change detection would otherwise skip a value
 * the store once acknowledged but no longer has. The version rule still applies: a snapshot row
 * without a cursor takes the version the store last took for that field, so it may be resent but
 * never overrides a newer change.
 *
 * Sites: the store is read on every site the configuration writes to (`inventory.reconcile.siteIds`,
 * `store.siteId`, and each SiteId the ERP records name). A SKU found on none of them is looked up by
 * code on the whole store: one living on another site is reported "on site N",
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

/** One store item as it streams past, reduced to what is compared. */
interface StoreView {
  code: string;
  siteId: number | null;
  fields: Record<string, unknown>;
  /** Fields whose store value has a shape the ERP's cannot be compared with (Taxes as an object): not compared. */
  opaque?: string[];
}

/** An ERP snapshot record kept for the comparison: its fields and cursor only (a few dozen bytes). */
interface ErpEntry {
  source: string;
  cursor: SourceRecord['cursor'];
  fields: Record<string, unknown>;
  /** Fields to queue: found different on some store view (every field when forced). */
  queue: Set<string> | undefined;
  onStore: boolean;
}

/** A SKU's fields to queue, from one source's record. */
interface QueueItem {
  source: string;
  cursor: SourceRecord['cursor'];
  sku: string;
  values: Record<string, unknown>;
  fields: string[];
}

/** SKUs merged and queued per call. */
const QUEUE_CHUNK = 5000;

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

/**
 * Compares the snapshots of `sources` with the store and queues the differences (unless dry run). The
 * ERP side is read first and kept as just the fields it maps; the store's inventory then streams past
 * it site by site, each item compared as it arrives and dropped, so the store's items (every field of
 * them: names, properties) are never held. 100,000 SKUs fit in the daemon's own footprint plus tens of MB.
 */
export async function reconcileWith(rt: InventoryRuntime, sources: readonly ChangeSource[], options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const withSnapshot = sources.filter((source) => source.snapshot !== undefined);
  if (options.source !== undefined && withSnapshot.length === 0) {
    throw new ConfigError([`inventory.sources.${options.source}: this source has no snapshot to reconcile from`]);
  }
  const sampleSize = options.sampleSize ?? 20;
  const skuFilter = options.skus ? new Set(options.skus) : undefined;
  const report: ReconcileReport = {
    dryRun: options.dryRun === true,
    sources: withSnapshot.map((source) => source.name),
    sites: [],
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
  const { erp, sites: erpSites } = await readErp(withSnapshot, skuFilter, report, options);
  // The store is compared with the published stock, so a reconcile never undoes a reservation.
  const observedAt = rt.now();
  const reservations = await rt.reservations.all();
  // What the store should show: the published stock, not the ERP's (computed per comparison, not kept).
  const expected = (entry: ErpEntry, sku: string): Record<string, unknown> => {
    const values = storeFields(entry.fields);
    if (typeof values.Stock === 'number') {
      const version = cursorToVersion(entry.cursor);
      const figure = { version: version ?? observedAt, at: observedAt, observedAt, ...(isTimestampCursor(entry.cursor) && version !== null ? { changedAt: version } : {}) };
      const safety = safetyStockOf({ value: entry.fields[SAFETY_FIELD] }, rt.config.inventory.safetyStock);
      values.Stock = publishedStock(values.Stock, figure, reservations.get(sku) ?? { version: 0, moves: 0, entries: [] }, safety).published;
    }
    return values;
  };
  const priorities = new Map<string, number>();

  // The sites the configuration writes to, then each SiteId the ERP records name; unfiltered reads them all.
  const sites = configuredSites(rt);
  if (!sites.includes(null)) for (const siteId of erpSites) if (!sites.includes(siteId)) sites.push(siteId);
  report.sites = sites;
  const differing = new Set<string>();
  const storeCodes = new Set<string>();
  const rejects: RecordReject[] = [];
  const compare = (view: StoreView): void => {
    if (report.storeItems++ % 1000 === 0) options.signal?.throwIfAborted();
    storeCodes.add(view.code);
    for (const entry of erp.get(view.code) ?? []) {
      entry.onStore = true;
      const values = expected(entry, view.code);
      const changed = diffRecord(report, view, values, sampleSize);
      if (changed.length > 0) differing.add(view.code);
      const queued = options.force ? valueFields(values) : changed;
      if (queued.length === 0) continue;
      entry.queue ??= new Set();
      for (const field of queued) entry.queue.add(field);
      // The worker recomputes the published stock from the ERP's figure and safety stock.
      if (queued.includes('Stock') && SAFETY_FIELD in entry.fields) entry.queue.add(SAFETY_FIELD);
      priorities.set(view.code, Math.min(priorities.get(view.code) ?? PRIORITY.other, reconcilePriority(queued, values, view)));
    }
  };
  for (const siteId of sites) await readSite(rt, siteId, options.skus, compare, rejects);
  options.onProgress?.(report.erpRecords, Math.max(report.erpRecords, report.storeItems));

  // SKUs on none of the sites read; an item the store sent malformed is there, only unreadable.
  const unreadable = new Set(rejects.flatMap((reject) => (reject.id === null ? [] : [reject.id])));
  const absent = [...erp.keys()].filter((sku) => !storeCodes.has(sku) && !unreadable.has(sku));
  const elsewhere = sites.includes(null) ? new Map<string, number[]>() : await findElsewhere(rt, sites, absent, rejects);
  const toQueue: QueueItem[] = [];
  for (const sku of absent) {
    const siteIds = elsewhere.get(sku);
    if (siteIds) {
      report.onOtherSites++;
      if (report.otherSiteSample.length < sampleSize) report.otherSiteSample.push({ sku, siteIds });
      continue;
    }
    report.missingOnStore++;
    if (report.missingSample.length < sampleSize) report.missingSample.push(sku);
    if (!rt.config.inventory.createMissing) continue;
    for (const entry of erp.get(sku) ?? []) {
      toQueue.push({ source: entry.source, cursor: entry.cursor, sku, values: entry.fields, fields: valueFields(expected(entry, sku)) });
    }
  }
  for (const [sku, entries] of erp) {
    for (const entry of entries) {
      if (entry.queue && entry.queue.size > 0) toQueue.push({ source: entry.source, cursor: entry.cursor, sku, values: entry.fields, fields: [...entry.queue] });
    }
  }
  if (report.dryRun) report.queued = new Set(toQueue.map(({ sku }) => sku)).size;
  else for (let i = 0; i < toQueue.length; i += QUEUE_CHUNK) report.queued += await queueForced(rt, toQueue.slice(i, i + QUEUE_CHUNK), priorities);

  report.storeRejected = new Set(rejects.map((reject) => reject.id ?? reject.issues.map(formatIssue).join())).size;
  if (!report.dryRun) {
    await rt.storeRejects.park(rejects);
    await rt.storeRejects.clear('inventory', storeCodes);
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

/** Reads every snapshot into SKU → its records (fields and cursor only), validated on the way; and the SiteIds they name. */
async function readErp(
  sources: readonly ChangeSource[],
  skuFilter: ReadonlySet<string> | undefined,
  report: ReconcileReport,
  options: ReconcileOptions,
): Promise<{ erp: Map<string, ErpEntry[]>; sites: Set<number> }> {
  const erp = new Map<string, ErpEntry[]>();
  const sites = new Set<number>();
  for (const source of sources) {
    for await (const chunk of source.snapshot!()) {
      options.signal?.throwIfAborted();
      for (const record of chunk) {
        const sku = typeof record.fields.Code === 'string' ? record.fields.Code : undefined;
        if (sku === undefined || (skuFilter && !skuFilter.has(sku))) continue;
        report.erpRecords++;
        if (validateInventoryUpdate({ InternalId: 0, ...storeFields(record.fields) }, sku).length > 0 || localFieldIssues(record, sku).length > 0) {
          report.rejected++;
          continue;
        }
        const siteId = record.fields.SiteId;
        if (typeof siteId === 'number' && Number.isInteger(siteId) && siteId > 0) sites.add(siteId);
        const entry: ErpEntry = { source: source.name, cursor: record.cursor, fields: record.fields, queue: undefined, onStore: false };
        const entries = erp.get(sku);
        if (entries) entries.push(entry);
        else erp.set(sku, [entry]);
      }
      options.onProgress?.(report.erpRecords, report.erpRecords);
    }
  }
  return { erp, sites };
}

/** The fields of the values the store should show (all but the key). */
function valueFields(values: Record<string, unknown>): string[] {
  return Object.keys(values).filter((field) => field !== 'Code');
}

/** A store showing more than may be sold is fixed first, then one showing less, then other fields. */
function reconcilePriority(fields: readonly string[], values: Record<string, unknown>, view: StoreView): number {
  if (!fields.includes('Stock')) return PRIORITY.other;
  return !(Number(view.fields.Stock) <= Number(values.Stock)) ? PRIORITY.decrease : PRIORITY.increase;
}

/** Sites the configuration writes to: `inventory.reconcile.siteIds` and `store.siteId`; none: no filter (null). */
function configuredSites(rt: InventoryRuntime): Array<number | null> {
  const sites = new Set<number>(rt.config.inventory.reconcile.siteIds);
  if (rt.config.store.siteId !== undefined) sites.add(rt.config.store.siteId);
  return sites.size > 0 ? [...sites] : [null];
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
  return opaque.length > 0 ? { code: item.Code, siteId, fields, opaque } : { code: item.Code, siteId, fields };
}

/** Streams one site of the store (or the items of `skus` on it) past `visit`; items that do not fit go to `rejects`. */
async function readSite(
  rt: InventoryRuntime,
  siteId: number | null,
  skus: readonly string[] | undefined,
  visit: (view: StoreView) => void,
  rejects: RecordReject[],
): Promise<void> {
  const add = (item: InventoryItem): void => visit(viewOf(siteId, item));
  const query = siteId === null ? {} : { siteId };
  const read = { onReject: (reject: RecordReject) => void rejects.push(reject) };
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
async function findElsewhere(
  rt: InventoryRuntime,
  sites: ReadonlyArray<number | null>,
  skus: readonly string[],
  rejects: RecordReject[],
): Promise<Map<string, number[]>> {
  const found = new Map<string, number[]>();
  const read = { onReject: (reject: RecordReject) => void rejects.push(reject) };
  await lookUp(rt, skus, {}, read, (item) => {
    const siteId = item.SiteId;
    if (typeof siteId !== 'number' || sites.includes(siteId)) return;
    found.set(item.Code, [...new Set([...(found.get(item.Code) ?? []), siteId])]);
  });
  return found;
}

/** Compares what the store should show with one store view of the SKU; counts into `report`; returns the differing fields. */
function diffRecord(report: ReconcileReport, view: StoreView, values: Record<string, unknown>, sampleSize: number): string[] {
  const changed: string[] = [];
  for (const field of valueFields(values)) {
    if (view.opaque?.includes(field)) continue;
    if (sameValue(values[field], view.fields[field])) continue;
    changed.push(field);
    report.differences++;
    report.perField[field] = (report.perField[field] ?? 0) + 1;
    if (report.sample.length < sampleSize) report.sample.push(difference(view.code, field, values[field], view));
  }
  return changed;
}

function difference(sku: string, field: string, erp: unknown, view: StoreView): FieldDifference {
  return { sku, field, erp, store: view.fields[field] ?? null, ...(view.siteId === null ? {} : { siteId: view.siteId }) };
}

/** Merges the chosen fields as forced pending values and queues their SKUs. */
async function queueForced(rt: InventoryRuntime, toQueue: readonly QueueItem[], priorities: ReadonlyMap<string, number>): Promise<number> {
  if (toQueue.length === 0) return 0;
  const at = rt.now();
  const unversioned = toQueue.filter(({ cursor }) => cursorToVersion(cursor) === null).map(({ sku }) => sku);
  const applied = await rt.state.appliedVersions(unversioned);
  await rt.state.merge(
    toQueue.map(({ source, cursor, sku, values, fields }) => {
      const version = cursorToVersion(cursor);
      const entries: Record<string, PendingEntry> = {};
      for (const field of fields) {
        entries[field] = {
          value: values[field],
          version: version ?? applied.get(sku)?.get(field) ?? 0,
          at,
          source,
          observedAt: at,
          ...(cursor === null ? {} : { cursor }),
          ...(isTimestampCursor(cursor) && version !== null ? { changedAt: version } : {}),
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
