/**
 * The store side of a reconcile: which sites are read, each site (and each price list on it) streamed
 * past the comparison (or the items of some SKUs looked up one by one), and ERP SKUs absent from those
 * sites looked for on the others.
 */
import type { InventoryGetOptions } from '../../../store/inventory.js';
import type { RecordReject } from '../../../store/records.js';
import type { InventoryItem } from '../../../store/schemas/index.js';
import type { InventoryRuntime } from '../runtime.js';
import { siteIdsOf } from '../target-key.js';

/** Store reads in flight when the store is read item by item (`skus`). */
const LOOKUP_CONCURRENCY = 8;

/** One read of the store: a site (null: no site filter) and a price list (undefined: the store's default list). */
export interface StoreRead {
  siteId: number | null;
  priceListId?: number;
}

/**
 * Sites the configuration writes to: `inventory.reconcile.siteIds`, `store.siteId` and `inventory.sites`;
 * none: no filter (null).
 */
export function configuredSites(rt: InventoryRuntime): Array<number | null> {
  const sites = new Set<number>(rt.config.inventory.reconcile.siteIds);
  if (rt.config.store.siteId !== undefined) sites.add(rt.config.store.siteId);
  for (const siteId of siteIdsOf(rt.config.inventory)) sites.add(siteId);
  return sites.size > 0 ? [...sites] : [null];
}

/**
 * Streams one site of the store for one price list (or the items of `skus` there) past `visit`, once
 * `ready` (the ERP side) is, the body held back while `betweenChunks` says to wait; items that do not fit
 * go to `rejects`.
 */
export async function readSite(
  rt: InventoryRuntime,
  at: StoreRead,
  skus: readonly string[] | undefined,
  visit: (item: InventoryItem, at: StoreRead) => void,
  rejects: RecordReject[],
  ready: Promise<void>,
  betweenChunks?: () => Promise<void> | undefined,
): Promise<void> {
  const add = (item: InventoryItem): void => visit(item, at);
  const query = { ...(at.siteId === null ? {} : { siteId: at.siteId }), ...(at.priceListId === undefined ? {} : { pricelistId: at.priceListId }) };
  const read = { onReject: (reject: RecordReject) => void rejects.push(reject) };
  if (skus === undefined) {
    await rt.store.inventory.each(query, add, { ...read, beforeBody: () => ready, ...(betweenChunks ? { betweenChunks } : {}) });
    return;
  }
  await ready;
  await lookUp(rt, skus, query, read, add);
}

/** Reads the items of `codes`, a few at a time, keeping only the item asked for (the store may ignore `code`). */
async function lookUp(
  rt: InventoryRuntime,
  codes: readonly string[],
  query: { siteId?: number; pricelistId?: number },
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
export async function findElsewhere(
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
