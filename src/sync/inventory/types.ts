/**
 * Shapes the inventory flow shares between its producer, worker, reconcile and tests: the job data,
 * the pending value of a field, and the events tests and metrics subscribe to.
 */
import type { Cursor } from '../../erp/types.js';

/**
 * Data of an `inventory` job: a batch of SKUs (often one). Values are not in the job: the worker reads
 * them from the pending state. Jobs queued by storesync 0.1 carry one `sku` instead; they still run.
 */
export type InventoryJobData = ({ skus: string[] } | { sku: string }) & {
  /** Send every pending field even if the store already acknowledged the same value. */
  force?: boolean;
};

/** The SKUs of a job. */
export function jobSkus(data: InventoryJobData): string[] {
  return 'skus' in data ? data.skus : [data.sku];
}

/** A field value waiting to be sent, as stored (JSON) in `inv:pending:{sku}`. */
export interface PendingEntry {
  value: unknown;
  /** Higher is newer; from the record's cursor, or the read time when the cursor has no order. */
  version: number;
  /** When it was merged (ms): among equal versions the latest write wins. */
  at: number;
  /** The source it came from, for metrics and messages. */
  source: string;
  /** Bypass change detection (set by the reconcile: the store was seen to differ). */
  force?: boolean;
  /** The ERP change time (ms) when the cursor is a timestamp, for the sync-lag metric. */
  changedAt?: number;
  /**
   * When the read that gave the value began (ms). A booked reservation still applies to a value
   * without a timestamp version that was read before the booking was seen (see `reservations.ts`).
   */
  observedAt?: number;
  /** The record's cursor as the source gave it, for `inventory explain`. */
  cursor?: Cursor;
}

/**
 * What became of a SKU in a job. `rate_limited` (the store said 429) and `deferred` (another job was
 * writing the SKU) return it to the queue without using an attempt; `isolated` hands a SKU that failed
 * or was refused inside a batch to a job of its own, which retries it or fails with the reason.
 */
export type JobOutcome = 'completed' | 'skipped' | 'retried' | 'failed' | 'rejected' | 'rate_limited' | 'deferred' | 'isolated';

/** One poll of one source. */
export interface PollReport {
  source: string;
  /** Records read, valid and rejected (rows re-read by the overlap or an inclusive cursor count again). */
  read: number;
  /** Of those, rows the overlap re-read and the poll recognised before normalising them. */
  known: number;
  /** Rows refused, whole or in part (some fields), whatever refused them (the source's coercion, the store's rules). */
  rejected: number;
  /** Distinct SKUs whose job was added (or found already waiting). */
  queued: number;
  /** The cursor stored after the poll. */
  cursor: Cursor;
}

/** A field whose ERP value differs from the store's. */
export interface FieldDifference {
  sku: string;
  field: string;
  erp: unknown;
  store: unknown;
  /** The store site the value was read from, when the reconcile reads by site. */
  siteId?: number;
}

/** What a reconcile found and did. */
export interface ReconcileReport {
  dryRun: boolean;
  sources: string[];
  /** Sites read from the store; `null` stands for "no site filter". */
  sites: Array<number | null>;
  erpRecords: number;
  storeItems: number;
  /** Field differences in total and per field. */
  differences: number;
  perField: Record<string, number>;
  /** SKUs with at least one difference. */
  itemsWithDifferences: number;
  /** The first differences (up to `sampleSize`). */
  sample: FieldDifference[];
  /** ERP SKUs the store does not have, on any site. */
  missingOnStore: number;
  missingSample: string[];
  /** ERP SKUs the store has only on sites the configuration does not write to: reported, not compared nor created. */
  onOtherSites: number;
  otherSiteSample: Array<{ sku: string; siteIds: number[] }>;
  /** ERP rows refused, whole or in part, whatever refused them (the source's coercion, the store's rules). */
  rejected: number;
  /** Store items that did not fit their schema (parked in `store-rejects` unless dry run; not compared). */
  storeRejected: number;
  /** Jobs added (on a dry run: the jobs that would be added; nothing is written). */
  queued: number;
}

/** Lifecycle events of the inventory flow. */
export interface InventoryEvents extends Record<string, unknown> {
  'inventory:poll:done': PollReport;
  'inventory:poll:failed': { source: string; error: Error };
  /** An ERP record refused before it was queued (it breaks a store rule); told once per refusal. */
  'inventory:record:refused': { source: string; sku: string; reason: string };
  'inventory:job:done': { sku: string; outcome: JobOutcome; fields: string[]; reason?: string };
  'inventory:reconcile:done': ReconcileReport;
  'inventory:reconcile:failed': { error: Error };
}
