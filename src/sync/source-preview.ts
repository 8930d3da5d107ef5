/**
 * A dry read of one ERP source, for `storesync sources test`: one batch from the start (or from the
 * cursor the flow has stored), the records the flow would queue, those it would refuse and why, and
 * the cursor the poll would then store. Nothing is written: the batch is never committed (CSV files
 * stay where they are) and the stored cursor is only read.
 */
import type { Redis } from 'ioredis';

import { maxCursor } from '../erp/cursor.js';
import type { ChangeSource, Cursor, RejectedRecord, SourceRecord, UnsettledFile } from '../erp/types.js';
import { SourceCursors } from './drain-source.js';
import { shipmentRecordIssues } from './fulfillment/producer.js';
import { FulfillmentState } from './fulfillment/state.js';
import { checkKitRow } from './inventory/listing/index.js';
import { inventoryRecordIssues } from './inventory/producer.js';
import { InventoryState } from './inventory/state.js';

/** The flows that read ERP sources (`kits`: the compositions of `inventory.kits`, read by their snapshot or changes). */
export type SourceFlow = 'inventory' | 'fulfillment' | 'kits';

/** What one dry read found. */
export interface SourcePreview {
  /** The cursor the read started from (null: from the start, or the source's initialCursor). */
  from: Cursor;
  /** Records the flow would queue. */
  records: SourceRecord[];
  /** Records the source or the flow would refuse, each issue with its record, field, value and rule. */
  rejects: RejectedRecord[];
  /** The cursor the poll would store once the batch is queued. */
  nextCursor: Cursor;
  /** Rows the read returned (records, refused rows, each once), before `records` and `rejects` were cut to the limit. */
  read: number;
  /** Rows refused, whole or in part (some fields), whatever refused them: the source or the flow's rules. */
  refused: number;
  /** Files a CSV source left for a later poll because they may still be written (none: empty). */
  unsettled: UnsettledFile[];
}

/** The cursor a flow has stored for a source (read only), or undefined before its first poll. */
export function storedCursor(redis: Redis, prefix: string, flow: SourceFlow, source: string): Promise<Cursor | undefined> {
  // A kits source's change feed keeps its cursor beside the catalog (`state:kit:cursor:{source}`).
  if (flow === 'kits') return new SourceCursors(redis, prefix, 'kit').get(source);
  const state = flow === 'inventory' ? new InventoryState(redis, prefix) : new FulfillmentState(redis, prefix);
  return state.cursors.get(source);
}

/**
 * Reads one batch of `source` from `from` and sorts it as the flow's producer would; writes nothing.
 * `records` and `rejects` hold at most `limit` entries each (a source without a tiebreak may return
 * more to get past rows sharing a cursor, a CSV file is read whole); `read` and `refused` count them all.
 * With `snapshot` (a source polled only by its snapshot diff) the batch is the snapshot's first records.
 * `sourceLimit` is the source's configured limit: a preview of fewer rows gets past a group of rows
 * sharing one cursor as far as the daemon's polls do (`ReadOptions.tieLimit`), and fails only where they would.
 */
export async function previewSource(
  source: ChangeSource,
  options: { flow: SourceFlow; from: Cursor; limit: number; sourceLimit?: number; snapshot?: boolean; priceLists?: ReadonlyArray<{ id: number; code: string }>; sites?: readonly number[] },
): Promise<SourcePreview> {
  const read = options.sourceLimit === undefined ? {} : { tieLimit: options.sourceLimit };
  const batch = options.snapshot ? await snapshotBatch(source, options.limit) : await source.readChanges(options.from, options.limit, read);
  const check =
    options.flow === 'inventory'
      ? (record: SourceRecord) => inventoryRecordIssues(record, options.priceLists, options.sites)
      : options.flow === 'kits'
        ? (record: SourceRecord) => {
            // A change row without component and quantity: the kit has no composition now (listing/kits/changes.ts).
            if (!options.snapshot && record.fields.component === undefined && record.fields.quantity === undefined) return [];
            const row = checkKitRow(record.fields, record.ref);
            return Array.isArray(row) ? row : [];
          }
        : shipmentRecordIssues;
  const records: SourceRecord[] = [];
  const rejects: RejectedRecord[] = [...batch.rejected];
  for (const record of batch.records) {
    const issues = [...(record.refused ?? []), ...check(record)];
    // A record whose source refused some fields (a fractional Stock under stockRounding: reject) is both
    // refused (those fields) and queued (the others), as the flow does.
    if (issues.length > 0) rejects.push({ ref: record.ref, issues });
    if (issues.length === (record.refused?.length ?? 0)) records.push(record);
  }
  return {
    from: options.from,
    records: records.slice(0, options.limit),
    rejects: rejects.slice(0, options.limit),
    nextCursor: maxCursor(options.from, batch.nextCursor),
    read: batch.records.length + batch.rejected.length + (batch.known ?? 0),
    refused: rejects.length,
    unsettled: batch.unsettled ?? [],
  };
}

/** The first `limit` records of the source's snapshot, and the rows it refused among them. */
async function snapshotBatch(source: ChangeSource, limit: number): Promise<{ records: SourceRecord[]; rejected: RejectedRecord[]; nextCursor: Cursor; known?: number; unsettled?: UnsettledFile[] }> {
  const records: SourceRecord[] = [];
  const rejected: RejectedRecord[] = [];
  for await (const chunk of source.snapshot?.() ?? []) {
    records.push(...chunk);
    rejected.push(...(chunk.rejected ?? []));
    if (records.length + rejected.length >= limit) break;
  }
  return { records: records.slice(0, limit), rejected, nextCursor: null };
}
