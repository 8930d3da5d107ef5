/**
 * What a reconcile queues: the fields found different (or all, forced) merged as forced pending values,
 * and their SKUs queued with the priority of the fix.
 */
import type { SourceRecord } from '../../../erp/types.js';
import { enqueueSkus, PRIORITY } from '../enqueue.js';
import { LOCAL_FIELDS, storeFields } from '../listing/index.js';
import type { InventoryRuntime } from '../runtime.js';
import { snapshotEntries, targetRows } from '../snapshot/index.js';
import { codeOf, siteIdsOf } from '../target-key.js';

/** A target's fields to queue, from one source's record. */
export interface QueueItem {
  source: string;
  cursor: SourceRecord['cursor'];
  /** The target's key (a bare Code, or one whose values name the target, is split by `targetRows`). */
  sku: string;
  values: Record<string, unknown>;
  fields: string[];
}

/**
 * SKUs merged and queued per call: as the snapshot diff's, 1,000 (5,000 held ~11 MiB of a chunk's items,
 * rows and pending entries at once, more than a first reconcile of 100,000 SKUs may hold in all).
 */
export const QUEUE_CHUNK = 1000;

/** The fields of a record the store takes: the record's own, unless it has one storesync keeps (no copy per row). */
export function storeValues(fields: Record<string, unknown>): Record<string, unknown> {
  for (const field in fields) if (LOCAL_FIELDS.has(field)) return storeFields(fields);
  return fields;
}

/** Merges the chosen fields as forced pending values (versioned as `snapshotEntries` says) and queues their SKUs. */
export async function queueForced(rt: InventoryRuntime, toQueue: readonly QueueItem[], priorities: ReadonlyMap<string, number>): Promise<number> {
  if (toQueue.length === 0) return 0;
  const rows = targetRows(toQueue, rt.config.inventory.priceLists, siteIdsOf(rt.config.inventory));
  await rt.state.merge(await snapshotEntries(rt.state, rows, rt.now(), { force: true }));
  // Priorities are per target; a target `targetRows` split from a bare Code takes its Code's.
  const byTarget = rows.some(({ sku }) => !priorities.has(sku)) ? new Map(rows.map(({ sku }) => [sku, priorities.get(sku) ?? priorities.get(codeOf(sku)) ?? PRIORITY.other])) : priorities;
  return enqueueSkus(
    rt.queue,
    rows.map(({ sku }) => sku),
    { force: true, priorities: byTarget },
  );
}
