/**
 * Which store items an ERP row of a reconcile is compared with, which of its fields, and the target
 * (../target-key.ts) a difference is queued for. Stock and the item's other fields belong to
 * `(Code, SiteId)`, `Price`/`OfferPrice` of a row naming a price list to `(Code, SiteId, list)`:
 * - a row naming a SiteId is compared with the item of that site only;
 * - with `inventory.sites`, a row naming none is compared on each listed site, each its own target;
 * - without, it is the default target (the bare Code), compared wherever the store shows the item;
 * - the store read for its default list is compared with every row but a listed row's prices; the
 *   store read for a price list (`pricelistId`) with the prices of the rows naming that list only.
 */
import { LOCAL_FIELDS, SAFETY_FIELD } from '../listing/index.js';
import type { ErpSnapshot } from '../snapshot/index.js';
import { keyOf, PRICE_FIELDS, type PriceList, TARGET_FIELDS } from '../target-key.js';
import type { QueueItem } from './reconcile-queue.js';

/** The target rules of one reconcile's ERP side. */
export class TargetRules {
  readonly #erp: ErpSnapshot;
  /** `inventory.sites`, by id. */
  readonly sites: readonly number[];
  readonly lists: readonly PriceList[];
  readonly #listIds: ReadonlyMap<string, number>;
  /** Per shape (the array `fieldNames` shares among rows of one shape): the fields compared. */
  readonly #defaultFields = new Map<readonly string[], string[]>();
  readonly #listFields = new Map<readonly string[], string[]>();

  constructor(erp: ErpSnapshot, sites: readonly number[], lists: readonly PriceList[]) {
    this.#erp = erp;
    this.sites = sites;
    this.lists = lists;
    this.#listIds = new Map(lists.map((list) => [list.code, list.id]));
  }

  /** The SiteId the row names, or undefined. */
  siteOf(row: number): number | undefined {
    const value = this.#erp.get(row, 'SiteId');
    return typeof value === 'number' ? value : undefined;
  }

  /** The id of the price list the row names (by id or code; read checked they agree), or undefined. */
  listOf(row: number): number | undefined {
    const id = this.#erp.get(row, 'PriceListId');
    if (typeof id === 'number') return id;
    const code = this.#erp.get(row, 'PriceListCode');
    return typeof code === 'string' && code !== '' ? this.#listIds.get(code) : undefined;
  }

  /**
   * The site of the row's target for an item on `site` (null: read without a site filter, and the item
   * names none): a number, undefined for the default target, or null when the row does not apply there.
   */
  targetSite(row: number, site: number | null): number | undefined | null {
    const named = this.siteOf(row);
    if (named !== undefined) return named === site ? named : null;
    if (this.sites.length === 0) return undefined;
    return site !== null && this.sites.includes(site) ? site : null;
  }

  /** The sites of the row's targets: its SiteId, else each of `inventory.sites`, else the default target (undefined). */
  sitesOf(row: number): ReadonlyArray<number | undefined> {
    const named = this.siteOf(row);
    if (named !== undefined) return [named];
    return this.sites.length > 0 ? this.sites : [undefined];
  }

  /** The sites of every target of the SKU whose first row is `first`. */
  expectedSites(first: number): Set<number | undefined> {
    const out = new Set<number | undefined>();
    for (let row: number | undefined = first; row !== undefined; row = this.#erp.next(row)) for (const site of this.sitesOf(row)) out.add(site);
    return out;
  }

  /** The fields compared with the store read for its default list: not the target's names, storesync's own, nor a listed row's prices. */
  defaultFields(row: number): string[] {
    const names = this.#erp.fieldNames(row);
    const listed = this.listOf(row) !== undefined;
    // The shape decides, except whether the list is named (a PriceListCode column may hold null).
    const cache = listed ? this.#listFields : this.#defaultFields;
    let fields = cache.get(names);
    if (fields === undefined) {
      fields = names.filter((field) => !LOCAL_FIELDS.has(field) && !TARGET_FIELDS.has(field) && !(listed && PRICE_FIELDS.has(field)));
      cache.set(names, fields);
    }
    return fields;
  }

  /** The fields compared with the store read for the row's price list: its prices. */
  priceFields(row: number): string[] {
    return this.#erp.fieldNames(row).filter((field) => PRICE_FIELDS.has(field));
  }

  /** The row's values without the fields naming its target: a queue item keyed by a target carries its values only. */
  values(row: number): Record<string, unknown> {
    const values = this.#erp.fields(row);
    for (const field of TARGET_FIELDS) delete values[field];
    return values;
  }

  /** The fields to merge for `fields` of the row: with Stock its SafetyStock too (the worker recomputes the published stock). */
  withSafety(row: number, fields: Iterable<string>): string[] {
    const out = new Set(fields);
    if (out.has('Stock') && this.#erp.fieldNames(row).includes(SAFETY_FIELD)) out.add(SAFETY_FIELD);
    return [...out];
  }

  /** The queue items that create the SKU on `site` (undefined: its default target): every field of each row applying there, by target. */
  creationItems(code: string, first: number, site: number | undefined): QueueItem[] {
    const items: QueueItem[] = [];
    for (let row: number | undefined = first; row !== undefined; row = this.#erp.next(row)) {
      if (!this.sitesOf(row).includes(site)) continue;
      const source = this.#erp.source(row);
      const cursor = this.#erp.cursor(row);
      const values = this.values(row);
      const at = site === undefined ? {} : { siteId: site };
      const base = this.defaultFields(row);
      if (base.length > 0) items.push({ source, cursor, sku: keyOf({ code, ...at }), values, fields: this.withSafety(row, base) });
      const list = this.listOf(row);
      const prices = list === undefined ? [] : this.priceFields(row);
      if (list !== undefined && prices.length > 0) items.push({ source, cursor, sku: keyOf({ code, ...at, priceListId: list }), values, fields: prices });
    }
    return items;
  }
}
