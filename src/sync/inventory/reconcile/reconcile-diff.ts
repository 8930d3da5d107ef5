/**
 * The comparison of a reconcile: an ERP row's fields against one store item, the differences counted
 * into the report, and the priority of the fix.
 */
import { INVENTORY_FIELDS } from '../../../erp/fields.js';
import type { InventoryItem } from '../../../store/schemas/index.js';
import { PRIORITY } from '../enqueue.js';
import { LOCAL_FIELDS } from '../listing/index.js';
import type { ErpSnapshot } from '../snapshot/index.js';
import { type PriceList, targetLabel } from '../target-key.js';
import type { FieldDifference, ReconcileReport } from '../types.js';
import { sameValue } from './compare.js';

/** The fields a reconcile compares: what an ERP may provide for the store, except the key. */
export const COMPARED = Object.keys(INVENTORY_FIELDS).filter((field) => field !== 'Code' && !LOCAL_FIELDS.has(field));

const SCALAR_TYPES = new Set(['string', 'int', 'decimal', 'bool']);

/** A store showing more than may be sold is fixed first, then one showing less, then other fields. */
export function reconcilePriority(fields: readonly string[], stock: unknown, item: InventoryItem): number {
  if (!fields.includes('Stock')) return PRIORITY.other;
  return !(Number(storeValue(item, 'Stock')) <= Number(stock)) ? PRIORITY.decrease : PRIORITY.increase;
}

/** True when the store's value of `field` has a shape the ERP's cannot be compared with (Taxes as an object): not compared. */
function isOpaque(item: InventoryItem, field: string): boolean {
  const value = (item as Record<string, unknown>)[field];
  return typeof value === 'object' && value !== null && SCALAR_TYPES.has(INVENTORY_FIELDS[field]?.type ?? '');
}

/** The store's value of a compared field; undefined when absent, null or opaque. */
function storeValue(item: InventoryItem, field: string): unknown {
  const value = (item as Record<string, unknown>)[field];
  return value === null || isOpaque(item, field) ? undefined : value;
}

/** One comparison of an ERP row with a store item: which fields, and where the difference goes. */
export interface Compared {
  /** The fields compared (`TargetRules` decides them by the read). */
  fields: readonly string[];
  /** What the store should show for Stock: the published figure of the target. */
  stock: unknown;
  /** The site the store was read on (null: no site filter). */
  siteId: number | null;
  /** The price list the store was read for (undefined: its default list). */
  priceListId: number | undefined;
  /** The target a difference is queued for, and the lists that name it in labels. */
  key: string;
  lists: readonly PriceList[];
}

/**
 * Compares what the store should show (the row's `fields`, the published stock for Stock) with one store
 * item; counts into `report`; returns the differing fields.
 */
export function diffRecord(report: ReconcileReport, item: InventoryItem, snapshot: ErpSnapshot, row: number, compared: Compared, sampleSize: number): string[] {
  const changed: string[] = [];
  for (const field of compared.fields) {
    if (isOpaque(item, field)) continue;
    const erp = field === 'Stock' ? compared.stock : snapshot.value(row, field);
    const store = storeValue(item, field);
    if (sameValue(erp, store)) continue;
    changed.push(field);
    report.differences++;
    report.perField[field] = (report.perField[field] ?? 0) + 1;
    if (report.sample.length < sampleSize) report.sample.push(difference(item.Code, field, erp, store, compared));
  }
  return changed;
}

/** A sample entry; the target's label only where it is not the bare Code (the default target). */
function difference(sku: string, field: string, erp: unknown, store: unknown, compared: Compared): FieldDifference {
  return {
    sku,
    field,
    erp,
    store: store ?? null,
    ...(compared.siteId === null ? {} : { siteId: compared.siteId }),
    ...(compared.priceListId === undefined ? {} : { priceListId: compared.priceListId }),
    ...(compared.key === sku ? {} : { target: targetLabel(compared.key, compared.lists) }),
  };
}
