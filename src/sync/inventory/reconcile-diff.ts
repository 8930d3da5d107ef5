/**
 * The comparison of a reconcile: an ERP row's fields against one store item, the differences counted
 * into the report, and the priority of the fix.
 */
import { INVENTORY_FIELDS } from '../../erp/fields.js';
import type { InventoryItem } from '../../store/schemas/index.js';
import { sameValue } from './compare.js';
import { PRIORITY } from './enqueue.js';
import type { ErpSnapshot } from './erp-snapshot.js';
import { LOCAL_FIELDS } from './published-stock.js';
import { PRICE_FIELDS, TARGET_FIELDS } from './target-key.js';
import type { FieldDifference, ReconcileReport } from './types.js';

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

/**
 * Compares what the store should show (the row's fields, `stock` for Stock) with one store item of the
 * SKU; counts into `report`; returns the differing fields.
 */
export function diffRecord(
  report: ReconcileReport,
  item: InventoryItem,
  siteId: number | null,
  snapshot: ErpSnapshot,
  row: number,
  stock: unknown,
  sampleSize: number,
): string[] {
  const changed: string[] = [];
  // A row of a price list: the store was read for its default list, so the list's prices are not compared.
  const listed = snapshot.value(row, 'PriceListCode') != null || snapshot.value(row, 'PriceListId') != null;
  for (const field of snapshot.fieldNames(row)) {
    if (LOCAL_FIELDS.has(field) || isOpaque(item, field)) continue;
    if (listed && (PRICE_FIELDS.has(field) || TARGET_FIELDS.has(field))) continue;
    const erp = field === 'Stock' ? stock : snapshot.value(row, field);
    const store = storeValue(item, field);
    if (sameValue(erp, store)) continue;
    changed.push(field);
    report.differences++;
    report.perField[field] = (report.perField[field] ?? 0) + 1;
    if (report.sample.length < sampleSize) report.sample.push(difference(item.Code, field, erp, store, siteId));
  }
  return changed;
}

function difference(sku: string, field: string, erp: unknown, store: unknown, siteId: number | null): FieldDifference {
  return { sku, field, erp, store: store ?? null, ...(siteId === null ? {} : { siteId }) };
}
