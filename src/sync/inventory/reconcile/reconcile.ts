/**
 * The reconcile: the ERP's full current set against the store's inventory, field by field, and only
 * the differences queued. The ERP snapshot is read first and staged in Redis by SKU
 * (reconcile-staging.ts); the store's inventory then streams past it a page at a time, each page compared
 * with its SKUs' staged records, and is never held (see `reconcileWith`): the process's memory does not
 * grow with the catalogue (issue 27).
 *
 * Differences are merged as forced pending values: change detection would otherwise skip a value
 * the store once acknowledged but no longer has. The version rule still applies: a snapshot row
 * without a cursor takes the version the store last took for that field, so it may be resent but
 * never overrides a newer change.
 *
 * Targets (issue 20): the store is read on every site the configuration writes to
 * (`inventory.reconcile.siteIds`, `store.siteId`, `inventory.sites`, and each SiteId the ERP records
 * name), and on each of those again for every price list the records name (`pricelistId`). Each store
 * item is compared with the ERP rows of its target (reconcile-targets.ts) and only the differing targets
 * are queued: a drift on site 2 is repaired on site 2 alone, one in a price list in that list alone.
 * What the store lacks is told per site (reconcile-missing.ts): a SKU found on none of the sites read is
 * looked up by code on the whole store, and one living on another site is reported "on site N", neither
 * missing nor created. A store item that does not fit its schema is parked in `store-rejects`.
 */
import { INVENTORY_FIELDS } from '../../../erp/fields.js';
import { createSource } from '../../../erp/index.js';
import type { ChangeSource } from '../../../erp/types.js';
import { ConfigError, formatIssue } from '../../../errors.js';
import type { RecordReject } from '../../../store/records.js';
import type { InventoryItem } from '../../../store/schemas/index.js';
import type { FlowDeps } from '../../flow.js';
import { enqueueSkus } from '../enqueue.js';
import type { Resolved } from '../listing/index.js';
import { isCycle } from '../listing/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../runtime.js';
import { type ErpSnapshot, targetRows } from '../snapshot/index.js';
import { siteIdsOf } from '../target-key.js';
import type { ReconcileReport } from '../types.js';
import { StoreComparison } from './reconcile-compare.js';
import { COMPARED } from './reconcile-diff.js';
import { type ErpSide, readErp } from './reconcile-erp.js';
import { missingTargets } from './reconcile-missing.js';
import { decideOrphans, OrphanTally } from './reconcile-orphans.js';
import { QUEUE_CHUNK, queueForced,type QueueItem } from './reconcile-queue.js';
import { ReconcileStaging, STAGE_CHUNK, type StagedItem } from './reconcile-staging.js';
import { configuredSites, readSite, type StoreRead } from './reconcile-store.js';

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
 * Compares the snapshots of `sources` with the store and queues the differing targets (unless dry run).
 * The ERP side is read first and staged in Redis by SKU (just the fields it maps); the store's inventory
 * then streams past it site by site, and list by list on each site, a page of items at a time compared
 * with the staged records of the page's SKUs and dropped, so neither side is held whole: the store's items
 * (every field of them: names, properties) nor the ERP's. What differs is staged too, and queued once
 * every read is done. The store's answer for the first site is asked for while the ERP is read, and read
 * once the ERP side is complete. The staging is deleted before the run returns, whatever its outcome.
 */
export async function reconcileWith(rt: InventoryRuntime, sources: readonly ChangeSource[], options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const withSnapshot = sources.filter((source) => source.snapshot !== undefined);
  if (options.source !== undefined && withSnapshot.length === 0) {
    throw new ConfigError([`inventory.sources.${options.source}: this source has no snapshot to reconcile from`]);
  }
  const staging = new ReconcileStaging(rt.redis, rt.config.redis.prefix, withSnapshot.map((source) => source.name));
  try {
    return await reconcileStaged(rt, sources, withSnapshot, staging, options);
  } finally {
    // A Redis that failed the run fails this too: the keys expire (reconcile-staging.ts), the first error is the one thrown.
    await staging.clear().catch(() => undefined);
  }
}

async function reconcileStaged(rt: InventoryRuntime, sources: readonly ChangeSource[], withSnapshot: readonly ChangeSource[], staging: ReconcileStaging, options: ReconcileOptions): Promise<ReconcileReport> {
  const { inventory } = rt.config;
  const siteIds = siteIdsOf(inventory);
  const sampleSize = options.sampleSize ?? 20;
  const skuFilter = options.skus ? new Set(options.skus) : undefined;
  const report = emptyReport(rt, options, withSnapshot);
  // The sites the configuration writes to are known now; each SiteId the ERP records name is added once
  // the ERP is read. Unfiltered (null) reads them all.
  const sites = configuredSites(rt);
  report.sites = sites;
  // Orphans are told only by a full run: every source read (each with a snapshot), every SKU.
  const full = options.source === undefined && !skuFilter && withSnapshot.length > 0 && withSnapshot.length === sources.length;
  const orphans = full ? new OrphanTally(inventory.reconcile.orphans, sampleSize) : undefined;
  // Set once the ERP side is read: the store's items are compared against it from then on.
  let ready: (PageContext & { side: ErpSide }) | undefined;
  // The ERP is read while the store prepares its answer for the first site: the store's body waits,
  // unread, until the ERP side is complete (it must be, to compare).
  const erpRead = (async () => {
    const signal = options.signal ? { signal: options.signal } : {};
    const side = await readErp(withSnapshot, report, staging, {
      skuFilter,
      lists: inventory.priceLists,
      sites: siteIds,
      ...signal,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    if (!sites.includes(null)) for (const siteId of side.sites) if (!sites.includes(siteId)) sites.push(siteId);
    report.priceLists = [...side.lists].sort((a, b) => a - b);
    // The store is compared with the published stock, so a reconcile never undoes a reservation.
    const observedAt = rt.now();
    const reservations = await rt.reservations.all();
    const kits = await rt.kits?.all();
    const { refused } = side;
    const comparison = new StoreComparison({ rt, sites: siteIds, lists: inventory.priceLists, report, refused, orphans, reservations, observedAt, force: options.force === true, sampleSize, ...signal, ...(kits ? { kits } : {}) });
    ready = { side, comparison, kits, orphans };
  })();
  const rejects: RecordReject[] = [];
  const pages = new PageQueue(staging, () => ready!, options.signal);
  const read = async (at: StoreRead): Promise<void> => {
    await readSite(rt, at, options.skus, pages.visit, rejects, erpRead, pages.betweenChunks);
    await pages.drain();
  };
  // configuredSites names one site at least; those the ERP names are added by the time the first is read.
  // Both settle before either's error is thrown: a failed store request must not leave the ERP read running.
  const [erpDone, firstSiteDone] = await Promise.allSettled([erpRead, read({ siteId: sites[0] ?? null })]);
  if (erpDone.status === 'rejected') throw erpDone.reason;
  if (firstSiteDone.status === 'rejected') throw firstSiteDone.reason;
  // Then the other sites, then each price list the ERP names on every site.
  for (const siteId of sites.slice(1)) await read({ siteId });
  for (const siteId of sites) for (const priceListId of report.priceLists) await read({ siteId, priceListId });
  options.onProgress?.(report.erpRecords, Math.max(report.erpRecords, report.storeItems));
  const { comparison: compared } = ready!;

  // Staged after the differences: what creates the missing, then what acts on the orphans.
  await missingTargets({ rt, staging, targetSites: siteIds, lists: inventory.priceLists, sites, rejects, report, sampleSize });
  await decideOrphans(rt, orphans, staging, report, { confirmed: options.confirmOrphans === true });
  const { priorities } = compared;
  // Everything staged, QUEUE_CHUNK at a time; a dry run counts the distinct targets it would queue.
  for await (const chunk of staging.queued(QUEUE_CHUNK)) {
    const items = chunk.map(withoutPriority);
    if (report.dryRun) report.queued += (await staging.addDistinct('dry', targetRows(items, inventory.priceLists, siteIds).map(({ sku }) => sku))).length;
    else report.queued += await queueForced(rt, items, prioritiesOf(chunk, priorities));
  }
  // Kits carry no ERP values to merge: their jobs re-compute the figure and send it even where the store
  // last acknowledged the same (it was seen to differ).
  if (compared.kitTargets.size > 0) report.queued += report.dryRun ? compared.kitTargets.size : await enqueueSkus(rt.queue, compared.kitTargets, { priorities, force: true });

  report.storeRejected = new Set(rejects.map((reject) => reject.id ?? reject.issues.map(formatIssue).join())).size;
  if (!report.dryRun) {
    await rt.storeRejects.park(rejects);
    // Every code the store showed: those of the ERP's SKUs, then the others.
    for await (const skus of staging.skus()) {
      const { any } = await staging.seen(skus, []);
      await rt.storeRejects.clear('inventory', any);
    }
    for await (const codes of staging.distinct('others')) await rt.storeRejects.clear('inventory', codes);
  }
  const differing = await staging.differing();
  report.itemsWithDifferences = differing.targets;
  report.skusWithDifferences = differing.skus;
  if (!skuFilter) {
    // A partial run (some SKUs) says nothing about the drift of the whole catalogue.
    rt.metrics.reconcileDrift.reset();
    for (const field of COMPARED) rt.metrics.reconcileDrift.set({ field }, report.perField[field] ?? 0);
  }
  rt.logger.info({ ...report, sample: undefined, missingSample: undefined, onlyOnStoreSample: undefined }, 'inventory reconcile done');
  rt.events.emit('inventory:reconcile:done', report);
  return report;
}

/** A staged item as the queue takes it. */
function withoutPriority({ priority: _priority, ...item }: StagedItem): QueueItem {
  return item;
}

/** The priorities of a chunk of staged items (the lowest per target), over `base` (kits, orphans). */
function prioritiesOf(chunk: readonly StagedItem[], base: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map(base);
  for (const { sku, priority } of chunk) out.set(sku, Math.min(out.get(sku) ?? priority, priority));
  return out;
}

/** What a page is compared by, once the ERP side is read. */
interface PageContext {
  comparison: StoreComparison;
  kits: ReadonlyMap<string, Resolved> | undefined;
  orphans: OrphanTally | undefined;
}

/**
 * The store's items gathered into pages of STAGE_CHUNK as a read streams them, each page compared (in
 * order, one at a time) with the staged records of its SKUs and of its kits' components; what the
 * comparison finds is staged (the differences to queue, the SKUs seen, the targets found different, the
 * store codes with no ERP record and the orphans). A page that fails stops the read at its next item.
 */
class PageQueue {
  readonly #staging: ReconcileStaging;
  readonly #ready: () => PageContext;
  readonly #signal: AbortSignal | undefined;
  #page: Array<readonly [InventoryItem, StoreRead]> = [];
  #done: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | undefined;
  /** Pages handed to `#compare` and not done yet. */
  #inFlight = 0;

  constructor(staging: ReconcileStaging, ready: () => PageContext, signal: AbortSignal | undefined) {
    this.#staging = staging;
    this.#ready = ready;
    this.#signal = signal;
  }

  /** Takes one item of a read (readSite hands none over before the ERP side is ready). */
  readonly visit = (item: InventoryItem, at: StoreRead): void => {
    if (this.#failure) throw this.#failure.error;
    this.#signal?.throwIfAborted();
    this.#page.push([item, at]);
    if (this.#page.length >= STAGE_CHUNK) this.#flush();
  };

  /** Holds the store's body back while a page waits behind the one being compared: at most two pages are held. */
  readonly betweenChunks = (): Promise<void> | undefined => (this.#inFlight > 1 ? this.#done.catch(() => undefined) : undefined);

  /** Compares what is gathered and waits for every page to be done; throws a page's failure. */
  async drain(): Promise<void> {
    this.#flush();
    await this.#done;
  }

  #flush(): void {
    if (this.#page.length === 0) return;
    const page = this.#page;
    this.#page = [];
    this.#inFlight++;
    this.#done = this.#done.then(() => this.#compare(page)).finally(() => this.#inFlight--);
    // Seen at the next item or at `drain`; never an unhandled rejection meanwhile.
    this.#done.catch((error: unknown) => void (this.#failure ??= { error }));
  }

  async #compare(page: ReadonlyArray<readonly [InventoryItem, StoreRead]>): Promise<void> {
    const { comparison, kits, orphans } = this.#ready();
    const codes = new Set<string>();
    for (const [item] of page) {
      codes.add(item.Code);
      const kit = kits?.get(item.Code);
      if (kit !== undefined && !isCycle(kit)) for (const component of kit) codes.add(component.code);
    }
    const erp: ErpSnapshot = await this.#staging.page(codes);
    const { items, seen, differing, others } = comparison.visitPage(erp, page);
    await this.#staging.markSeen(seen);
    await this.#staging.queue(items);
    await this.#staging.markDiffering(differing);
    await this.#staging.addDistinct('others', others);
    await orphans?.stage(this.#staging);
  }
}

/** The report before anything is read. */
function emptyReport(rt: InventoryRuntime, options: ReconcileOptions, sources: readonly ChangeSource[]): ReconcileReport {
  return {
    dryRun: options.dryRun === true,
    sources: sources.map((source) => source.name),
    sites: [],
    priceLists: [],
    erpRecords: 0,
    storeItems: 0,
    differences: 0,
    perField: {},
    itemsWithDifferences: 0,
    skusWithDifferences: 0,
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
}
