/**
 * Pending entries for snapshot rows, shared by the reconcile and the snapshot diff. A snapshot row
 * has no cursor of its own more often than not (a table without a change column, a nightly file), and
 * its values must never override a newer change: a row without an ordered cursor takes, per field,
 * the version the store last took for that field (0 when none), so the merge keeps any newer pending
 * change and the worker may resend the value but never sends it over a newer one.
 */
import { cursorToVersion, isTimestampCursor } from '../../../erp/cursor.js';
import type { Cursor } from '../../../erp/types.js';
import type { InventoryState } from '../state.js';
import { type PriceList, splitByTarget, targetParts } from '../target-key.js';
import type { PendingEntry } from '../types.js';

/** One snapshot row's fields to merge. */
export interface SnapshotRow {
  source: string;
  cursor: Cursor;
  sku: string;
  /** The row's values (at least those of `fields`). */
  values: Record<string, unknown>;
  /** The fields to merge. */
  fields: readonly string[];
}

/** How the entries are flagged: `force` (the reconcile saw the store differ) or `resend` (the diff saw the ERP change). */
export type SnapshotFlags = Pick<PendingEntry, 'force' | 'resend'>;

/**
 * The rows' pending entries, versioned as the module comment says, merged at `at`; `observedAt` is when
 * the read that gave them began (../listing/reservations.ts: a booking seen after it still applies), `at` by default.
 */
export async function snapshotEntries(
  state: InventoryState,
  rows: readonly SnapshotRow[],
  at: number,
  flags: SnapshotFlags,
  observedAt: number = at,
): Promise<Array<{ sku: string; entries: Record<string, PendingEntry> }>> {
  const unversioned = rows.filter(({ cursor }) => cursorToVersion(cursor) === null).map(({ sku }) => sku);
  const applied = await state.appliedVersions(unversioned);
  return rows.map(({ source, cursor, sku, values, fields }) => {
    const version = cursorToVersion(cursor);
    const entries: Record<string, PendingEntry> = {};
    for (const field of fields) {
      entries[field] = {
        value: values[field],
        version: version ?? applied.get(sku)?.get(field) ?? 0,
        at,
        source,
        observedAt,
        ...(cursor === null ? {} : { cursor }),
        ...(isTimestampCursor(cursor) && version !== null ? { changedAt: version } : {}),
        ...flags,
      };
    }
    return { sku, entries };
  });
}

/**
 * The rows as rows of targets (../target-key.ts): a row naming a site or a price list becomes one row per
 * target it names, its `sku` the target's key, without the fields that name it; with `sites`
 * (`inventory.sites`), a row of a bare Code becomes one row per site. Other rows as they are.
 */
export function targetRows<Row extends SnapshotRow>(rows: readonly Row[], lists: readonly PriceList[], sites: readonly number[] = []): Row[] {
  return rows.flatMap((row) => {
    const { values } = row;
    const named = values.SiteId !== undefined || values.PriceListCode !== undefined || values.PriceListId !== undefined;
    // A row already of a target (its key names one) stays it; a bare Code goes to every site of `sites`.
    if (!named && (sites.length === 0 || row.sku !== targetParts(row.sku).code)) return [row];
    const chosen: Record<string, unknown> = {};
    for (const field of row.fields) chosen[field] = values[field];
    for (const field of ['SiteId', 'PriceListCode', 'PriceListId']) if (values[field] !== undefined) chosen[field] = values[field];
    return splitByTarget(row.sku, chosen, lists, sites).map(({ key, fields }) => {
      const names = Object.keys(fields).filter((field) => field !== 'Code');
      return { ...row, sku: key, values: fields, fields: names };
    });
  });
}
