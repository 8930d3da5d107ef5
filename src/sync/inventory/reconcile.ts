/**
 * The reconcile: the ERP's full current set against the store's inventory, field by field, and only
 * the differences queued. The ERP snapshot is read first and kept as the few fields it maps, in
 * columns (`ErpSnapshot`); the store's inventory then streams past it item by item and is never held
 * (see `reconcileWith`).
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
import type { ChangeSource } from '../../erp/types.js';
import { ConfigError, formatIssue } from '../../errors.js';
import type { RecordReject } from '../../store/records.js';
import type { InventoryItem } from '../../store/schemas/index.js';
import { validateInventoryUpdate } from '../../store/validation.js';
import type { FlowDeps } from '../flow.js';
import { PRIORITY } from './enqueue.js';
import { ErpSnapshot, refusedRows } from './erp-snapshot.js';
import { localFieldIssues, publishedStock, SAFETY_FIELD, safetyStockOf } from './published-stock.js';
import { COMPARED, diffRecord, reconcilePriority } from './reconcile-diff.js';
import { decideOrphans, OrphanTally } from './reconcile-orphans.js';
import { QUEUE_CHUNK, queueForced, type QueueItem, queueItem, storeValues, valueFields } from './reconcile-queue.js';
import { configuredSites, findElsewhere, readSite } from './reconcile-store.js';
import type { SkuReservations } from './reservations.js';
import { type InventoryRuntime, openInventoryRuntime } from './runtime.js';
import type { ReconcileReport } from './types.js';

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
  /** Act on store items no ERP source has even past the guard (`inventory.reconcile.orphans`). */
  confirmOrphans?: boolean;
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

/**
 * Compares the snapshots of `sources` with the store and queues the differences (unless dry run). The
 * ERP side is read first and kept as just the fields it maps (about 130 bytes a SKU); the store's
 * inventory then streams past it site by site, each item compared as it arrives and dropped, so the
 * store's items (every field of them: names, properties) are never held. The store's answer for the
 * first site is asked for while the ERP is read, and read once the ERP side is complete.
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
    onlyOnStore: 0,
    onlyOnStoreSample: [],
    orphans: { checked: false, action: rt.config.inventory.reconcile.orphans, toChange: 0, queued: 0, held: 0 },
    rejected: 0,
    storeRejected: 0,
    queued: 0,
  };
  // The sites the configuration writes to are known now; each SiteId the ERP records name is added once
  // the ERP is read. Unfiltered (null) reads them all.
  const sites = configuredSites(rt);
  let erp = new ErpSnapshot();
  // SKUs whose ERP records were refused: the ERP has them, so they are no orphans.
  let refused: ReadonlySet<string> = new Set();
  // Orphans are told only by a full run: every source read (each with a snapshot), every SKU.
  const full = options.source === undefined && !skuFilter && withSnapshot.length > 0 && withSnapshot.length === sources.length;
  const orphans = full ? new OrphanTally(rt.config.inventory.reconcile.orphans, sampleSize) : undefined;
  // Per ERP row: whether the store showed its SKU, and the fields to queue (found different on some store
  // item, every field when forced).
  let onStore = new Uint8Array(0);
  const queue = new Map<number, Set<string>>();
  let reservations: ReadonlyMap<string, SkuReservations> = new Map();
  let observedAt = 0;
  // The ERP is read while the store prepares its answer for the first site: the store's body waits,
  // unread, until the ERP side is complete (it must be, to compare), so memory holds the ERP side only.
  const erpRead = (async () => {
    const read = await readErp(withSnapshot, skuFilter, report, options);
    erp = read.erp;
    refused = read.refused;
    onStore = new Uint8Array(erp.rows);
    if (!sites.includes(null)) for (const siteId of read.sites) if (!sites.includes(siteId)) sites.push(siteId);
    // The store is compared with the published stock, so a reconcile never undoes a reservation.
    observedAt = rt.now();
    reservations = await rt.reservations.all();
  })();
  /** The Stock the store should show for an ERP row: the published stock (computed per comparison, not kept). */
  const expectedStock = (row: number, sku: string): unknown => {
    const stock = erp.get(row, 'Stock');
    if (typeof stock !== 'number') return stock;
    const safety = safetyStockOf({ value: erp.get(row, SAFETY_FIELD) }, rt.config.inventory.safetyStock);
    const held = reservations.get(sku);
    // No reservation: what publishedStock would compute, without building its figure.
    if (held === undefined) return Math.max(0, stock - safety);
    const cursor = erp.cursor(row);
    const version = cursorToVersion(cursor);
    const figure = { version: version ?? observedAt, at: observedAt, observedAt, ...(isTimestampCursor(cursor) && version !== null ? { changedAt: version } : {}) };
    return publishedStock(stock, figure, held, safety).published;
  };
  const priorities = new Map<string, number>();

  report.sites = sites;
  const differing = new Set<string>();
  // Store codes with no ERP record (those with one are marked `onStore` on their entries).
  const otherCodes = new Set<string>();
  const rejects: RecordReject[] = [];
  const compare = (item: InventoryItem, siteId: number | null): void => {
    if (report.storeItems++ % 1000 === 0) options.signal?.throwIfAborted();
    const code = item.Code;
    const first = erp.first(code);
    if (first === undefined) {
      otherCodes.add(code);
      if (!refused.has(code)) orphans?.see(item, siteId);
      return;
    }
    for (let row: number | undefined = first; row !== undefined; row = erp.next(row)) {
      onStore[row] = 1;
      const stock = expectedStock(row, code);
      const changed = diffRecord(report, item, siteId, erp, row, stock, sampleSize);
      if (changed.length > 0) differing.add(code);
      const queued = options.force ? valueFields(erp.fieldNames(row)) : changed;
      if (queued.length === 0) continue;
      let fields = queue.get(row);
      if (fields === undefined) queue.set(row, (fields = new Set()));
      for (const field of queued) fields.add(field);
      // The worker recomputes the published stock from the ERP's figure and safety stock.
      if (queued.includes('Stock') && erp.fieldNames(row).includes(SAFETY_FIELD)) fields.add(SAFETY_FIELD);
      priorities.set(code, Math.min(priorities.get(code) ?? PRIORITY.other, reconcilePriority(queued, stock, item)));
    }
  };
  // configuredSites names one site at least; those the ERP names are added by the time the first is read.
  // Both settle before either's error is thrown: a failed store request must not leave the ERP read running.
  const [erpDone, firstSiteDone] = await Promise.allSettled([erpRead, readSite(rt, sites[0] ?? null, options.skus, compare, rejects, erpRead)]);
  if (erpDone.status === 'rejected') throw erpDone.reason;
  if (firstSiteDone.status === 'rejected') throw firstSiteDone.reason;
  for (const siteId of sites.slice(1)) await readSite(rt, siteId, options.skus, compare, rejects, erpRead);
  options.onProgress?.(report.erpRecords, Math.max(report.erpRecords, report.storeItems));

  // SKUs on none of the sites read; an item the store sent malformed is there, only unreadable.
  const unreadable = new Set(rejects.flatMap((reject) => (reject.id === null ? [] : [reject.id])));
  const absent = [...erp.skus()].filter(([sku, row]) => onStore[row] === 0 && !unreadable.has(sku)).map(([sku]) => sku);
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
    for (let row = erp.first(sku); row !== undefined; row = erp.next(row)) toQueue.push(queueItem(erp, row, sku, valueFields(erp.fieldNames(row))));
  }
  for (const [sku, first] of erp.skus()) {
    for (let row: number | undefined = first; row !== undefined; row = erp.next(row)) {
      const fields = queue.get(row);
      if (fields && fields.size > 0) toQueue.push(queueItem(erp, row, sku, [...fields]));
    }
  }
  const orphanItems = decideOrphans(rt, orphans, report, { confirmed: options.confirmOrphans === true });
  for (const item of orphanItems) priorities.set(item.sku, PRIORITY.decrease);
  toQueue.push(...orphanItems);
  report.orphans.queued = orphanItems.length;
  if (report.dryRun) report.queued = new Set(toQueue.map(({ sku }) => sku)).size;
  else for (let i = 0; i < toQueue.length; i += QUEUE_CHUNK) report.queued += await queueForced(rt, toQueue.slice(i, i + QUEUE_CHUNK), priorities);

  report.storeRejected = new Set(rejects.map((reject) => reject.id ?? reject.issues.map(formatIssue).join())).size;
  if (!report.dryRun) {
    await rt.storeRejects.park(rejects);
    await rt.storeRejects.clear('inventory', storeCodes(erp, onStore, otherCodes));
  }
  report.itemsWithDifferences = differing.size;
  if (!skuFilter) {
    // A partial run (some SKUs) says nothing about the drift of the whole catalogue.
    rt.metrics.reconcileDrift.reset();
    for (const field of COMPARED) rt.metrics.reconcileDrift.set({ field }, report.perField[field] ?? 0);
  }
  rt.logger.info({ ...report, sample: undefined, missingSample: undefined, onlyOnStoreSample: undefined }, 'inventory reconcile done');
  rt.events.emit('inventory:reconcile:done', report);
  return report;
}

/** Reads every snapshot into SKU → its records (fields and cursor only, as rows), validated on the way; and the SiteIds they name. */
async function readErp(
  sources: readonly ChangeSource[],
  skuFilter: ReadonlySet<string> | undefined,
  report: ReconcileReport,
  options: ReconcileOptions,
): Promise<{ erp: ErpSnapshot; sites: Set<number>; refused: Set<string> }> {
  const erp = new ErpSnapshot();
  const sites = new Set<number>();
  const refused = new Set<string>();
  for (const source of sources) {
    for await (const chunk of source.snapshot!()) {
      options.signal?.throwIfAborted();
      const refusedWhole = refusedRows(chunk, skuFilter);
      report.erpRecords += refusedWhole;
      report.rejected += refusedWhole;
      // A row the source could not read is left out of the snapshot; its SKU is still the ERP's, no orphan.
      for (const bad of chunk.rejected ?? []) for (const issue of bad.issues) if (issue.record !== undefined) refused.add(issue.record);
      for (const record of chunk) {
        const sku = typeof record.fields.Code === 'string' ? record.fields.Code : undefined;
        if (sku === undefined || (skuFilter && !skuFilter.has(sku))) continue;
        report.erpRecords++;
        if (validateInventoryUpdate(storeValues(record.fields), sku).length > 0 || localFieldIssues(record, sku).length > 0) {
          report.rejected++;
          refused.add(sku);
          continue;
        }
        // Some fields refused (a fractional Stock under stockRounding: reject): counted, the others compared.
        if (record.refused) report.rejected++;
        const siteId = record.fields.SiteId;
        if (typeof siteId === 'number' && Number.isInteger(siteId) && siteId > 0) sites.add(siteId);
        erp.add(source.name, sku, record);
      }
      options.onProgress?.(report.erpRecords, report.erpRecords);
    }
  }
  return { erp, sites, refused };
}

/** Every code the store showed: those of the ERP's SKUs (`onStore` by first row), then the others. */
function* storeCodes(erp: ErpSnapshot, onStore: Uint8Array, otherCodes: ReadonlySet<string>): Iterable<string> {
  for (const [sku, row] of erp.skus()) if (onStore[row] === 1) yield sku;
  yield* otherCodes;
}

