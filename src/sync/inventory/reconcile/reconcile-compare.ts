/**
 * The store side of a reconcile meeting the ERP side: the store's items, a page at a time as a read
 * streams them past, are compared with the ERP rows of the targets they stand for (reconcile-targets.ts
 * says which), those rows an `ErpSnapshot` of the page's SKUs only (reconcile-staging.ts), and dropped;
 * only what differs is kept, per ERP row and target, to be staged for the queue. The Stock the store should show is
 * the target's published stock: a reconcile never undoes a reservation, and on a site of
 * `inventory.sites` it expects that site's part of the allocation (../listing/allocation.ts).
 */
import { cursorToVersion, isTimestampCursor } from '../../../erp/cursor.js';
import type { InventoryItem } from '../../../store/schemas/index.js';
import { PRIORITY } from '../enqueue.js';
import { isCycle, kitFigure, placementOf, publishedStock, type Resolved, SAFETY_FIELD, safetyStockOf, type SkuReservations } from '../listing/index.js';
import type { InventoryRuntime } from '../runtime.js';
import type { ErpSnapshot } from '../snapshot/index.js';
import type { PriceList } from '../target-key.js';
import { keyOf } from '../target-key.js';
import type { ReconcileReport } from '../types.js';
import { diffRecord, reconcilePriority } from './reconcile-diff.js';
import type { OrphanTally } from './reconcile-orphans.js';
import type { StagedItem } from './reconcile-staging.js';
import type { StoreRead } from './reconcile-store.js';
import { TargetRules } from './reconcile-targets.js';

/** A Code without reservations, for the allocation of a site's figure. */
const NO_RESERVATIONS: SkuReservations = { version: 0, moves: 0, entries: [] };

/** What a comparison needs, the ERP side complete (and staged). */
export interface ComparisonContext {
  rt: InventoryRuntime;
  /** `inventory.sites` (ids) and `inventory.priceLists`: the target rules of each page. */
  sites: readonly number[];
  lists: readonly PriceList[];
  report: ReconcileReport;
  /** SKUs whose ERP records were refused: the ERP has them, so they are no orphans. */
  refused: ReadonlySet<string>;
  /** Set by a full run only (orphans can be told then). */
  orphans: OrphanTally | undefined;
  reservations: ReadonlyMap<string, SkuReservations>;
  /** When the reservations were read. */
  observedAt: number;
  /** Queue every compared field, equal or not. */
  force: boolean;
  /** The kits (`inventory.kits`): their Stock is compared with their figure from the components' rows. */
  kits?: ReadonlyMap<string, Resolved>;
  sampleSize: number;
  signal?: AbortSignal;
}

/**
 * One page's outcome, to be staged (reconcile-staging.ts): what to queue, where the store showed the page's
 * ERP SKUs, the targets found different and the store codes with no ERP record.
 */
export interface PageResult {
  items: StagedItem[];
  /** ERP SKU → the sites the store showed it on (empty: a read without a site filter, the item naming none). */
  seen: Map<string, Set<number>>;
  /** Targets with a difference. */
  differing: Set<string>;
  /** Store codes with no ERP record. */
  others: Set<string>;
}

/**
 * The store's items compared a page at a time; what a page finds is handed back to be staged. Only what
 * the kits need is kept across pages (bounded by the kits, whose compositions are held anyway).
 */
export class StoreComparison {
  readonly #ctx: ComparisonContext;
  /** The page's ERP rows and their rules (`visitPage`). */
  #erp!: ErpSnapshot;
  #rules!: TargetRules;
  /** Where the store showed each of the page's ERP SKUs. */
  #seen = new Map<string, Set<number>>();
  /** The page's store codes with no ERP record. */
  #others = new Set<string>();
  /** The page's targets with a difference. */
  #differing = new Set<string>();
  /** Kit targets whose Stock differs from their figure (or all compared, forced): queued to be re-computed. */
  readonly kitTargets = new Set<string>();
  /** Per kit target: the priority of its fix. */
  readonly priorities = new Map<string, number>();
  /** Per target of the page's rows: the priority of its fix. */
  #pagePriorities = new Map<string, number>();
  /** Per ERP row of the page, per target: the fields to queue. */
  #queue = new Map<number, Map<string, Set<string>>>();
  /** Items visited, over every read. */
  #visited = 0;

  constructor(ctx: ComparisonContext) {
    this.#ctx = ctx;
  }

  /** Compares a page of store items (of any reads) with `erp`, the rows of their SKUs and of the kits' components. */
  visitPage(erp: ErpSnapshot, items: ReadonlyArray<readonly [InventoryItem, StoreRead]>): PageResult {
    this.#erp = erp;
    this.#rules = new TargetRules(erp, this.#ctx.sites, this.#ctx.lists);
    this.#seen = new Map();
    this.#others = new Set();
    this.#differing = new Set();
    this.#queue = new Map();
    this.#pagePriorities = new Map();
    for (const [item, read] of items) this.visit(item, read);
    return { items: this.#queueItems(), seen: this.#seen, differing: this.#differing, others: this.#others };
  }

  /**
   * Compares one store item of `read` with the rows of its targets. Only a read of the store's default
   * list counts store items, tells what the store has and finds orphans: a price list's read shows the
   * same items again, with that list's prices.
   */
  visit(item: InventoryItem, read: StoreRead): void {
    const { report } = this.#ctx;
    const erp = this.#erp;
    const rules = this.#rules;
    const onDefault = read.priceListId === undefined;
    if (this.#visited++ % 1000 === 0) this.#ctx.signal?.throwIfAborted();
    if (onDefault) report.storeItems++;
    const code = item.Code;
    const first = erp.first(code);
    const kit = this.#ctx.kits?.get(code);
    // A kit's Stock is its figure, whether or not the ERP has a row for its code (ERPNext and Odoo keep none).
    if (kit && onDefault) this.#compareKit(item, read, code, kit);
    if (first === undefined) {
      if (kit) return;
      if (!onDefault) return;
      this.#others.add(code);
      if (!this.#ctx.refused.has(code)) this.#ctx.orphans?.see(item, read.siteId);
      return;
    }
    // Read without a site filter, the item says where it is.
    const site = read.siteId ?? (typeof item.SiteId === 'number' ? item.SiteId : null);
    if (onDefault) {
      let sites = this.#seen.get(code);
      if (sites === undefined) this.#seen.set(code, (sites = new Set()));
      if (site !== null) sites.add(site);
    }
    for (let row: number | undefined = first; row !== undefined; row = erp.next(row)) {
      const siteId = rules.targetSite(row, site);
      if (siteId === null || (!onDefault && rules.listOf(row) !== read.priceListId)) continue;
      const all = onDefault ? rules.defaultFields(row) : rules.priceFields(row);
      // An ERP stock row for a kit's code is not used.
      const fields = kit ? all.filter((field) => field !== 'Stock') : all;
      if (fields.length === 0) continue;
      const key = keyOf({ code, ...(siteId === undefined ? {} : { siteId }), ...(onDefault ? {} : { priceListId: read.priceListId }) });
      const stock = fields.includes('Stock') ? this.#expectedStock(row, code, siteId) : undefined;
      const compared = { fields, stock, siteId: read.siteId, priceListId: read.priceListId, key, lists: rules.lists };
      const changed = diffRecord(report, item, erp, row, compared, this.#ctx.sampleSize);
      if (changed.length > 0) this.#differing.add(key);
      const queued = this.#ctx.force ? fields : changed;
      if (queued.length === 0) continue;
      let byTarget = this.#queue.get(row);
      if (byTarget === undefined) this.#queue.set(row, (byTarget = new Map()));
      const toQueue = byTarget.get(key) ?? new Set<string>();
      byTarget.set(key, toQueue);
      for (const field of rules.withSafety(row, queued)) toQueue.add(field);
      this.#pagePriorities.set(key, Math.min(this.#pagePriorities.get(key) ?? PRIORITY.other, reconcilePriority(queued, stock, item)));
    }
  }

  /** The page's fields found different (or all compared, forced), as queue items keyed by their targets, with the priority of their fix. */
  #queueItems(): StagedItem[] {
    const erp = this.#erp;
    const rules = this.#rules;
    const items: StagedItem[] = [];
    for (const [row, byTarget] of this.#queue) {
      const values = rules.values(row);
      const source = erp.source(row);
      const cursor = erp.cursor(row);
      for (const [sku, fields] of byTarget) {
        const priority = Math.min(this.#pagePriorities.get(sku) ?? PRIORITY.other, this.priorities.get(sku) ?? PRIORITY.other);
        items.push({ source, cursor, sku, values, fields: [...fields], priority });
      }
    }
    return items;
  }

  /** Compares a kit's Stock with `min over its components of floor(expected stock ÷ quantity)` (none in a cycle). */
  #compareKit(item: InventoryItem, read: StoreRead, code: string, kit: Resolved): void {
    const { report, rt } = this.#ctx;
    const rules = this.#rules;
    const site = read.siteId ?? (typeof item.SiteId === 'number' ? item.SiteId : null);
    const sites = rules.sites;
    if (isCycle(kit) || (sites.length > 0 && (site === null || !sites.includes(site)))) return;
    const siteId = sites.length > 0 && site !== null ? site : undefined;
    const stock = kitFigure(kit, (component) => {
      for (let row = this.#erp.first(component); row !== undefined; row = this.#erp.next(row)) {
        const expected = rules.targetSite(row, siteId ?? null) === null ? undefined : this.#expectedStock(row, component, siteId);
        if (typeof expected === 'number') return expected;
      }
      return undefined;
    }).figure;
    const key = keyOf({ code, ...(siteId === undefined ? {} : { siteId }) });
    const changed = diffRecord(report, item, this.#erp, -1, { fields: ['Stock'], stock, siteId: read.siteId, priceListId: undefined, key, lists: rt.config.inventory.priceLists }, this.#ctx.sampleSize);
    if (changed.length > 0) this.#differing.add(key);
    if (changed.length === 0 && !this.#ctx.force) return;
    this.kitTargets.add(key);
    this.priorities.set(key, Math.min(this.priorities.get(key) ?? PRIORITY.other, reconcilePriority(['Stock'], stock, item)));
  }

  /**
   * The Stock the store should show for an ERP row on a target of `siteId`: the published stock, that
   * site's figure of the allocation on a site of `inventory.sites` (computed per comparison, not kept).
   */
  #expectedStock(row: number, code: string, siteId: number | undefined): unknown {
    const { rt } = this.#ctx;
    const erp = this.#erp;
    const stock = erp.get(row, 'Stock');
    if (typeof stock !== 'number') return stock;
    const safety = safetyStockOf({ value: erp.get(row, SAFETY_FIELD) }, rt.config.inventory.safetyStock);
    const placement = siteId === undefined ? undefined : placementOf(keyOf({ code, siteId }), rt.config.inventory);
    const held = this.#ctx.reservations.get(code);
    // No reservation, one site: what publishedStock would compute, without building its figure.
    if (held === undefined && placement === undefined) return Math.max(0, stock - safety);
    const { observedAt } = this.#ctx;
    const cursor = erp.cursor(row);
    const version = cursorToVersion(cursor);
    const figure = { version: version ?? observedAt, at: observedAt, observedAt, ...(isTimestampCursor(cursor) && version !== null ? { changedAt: version } : {}) };
    return publishedStock(stock, figure, held ?? NO_RESERVATIONS, safety, placement).published;
  }
}
