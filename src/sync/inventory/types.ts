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
  /**
   * The value may be new at the version the store already took (set by the snapshot diff: the ERP
   * changed it without moving its cursor): sent unless the store acknowledged the same value.
   */
  resend?: boolean;
  /** The ERP change time (ms) when the cursor is a timestamp, for the sync-lag metric. */
  changedAt?: number;
  /**
   * When the read that gave the value began (ms). A booked reservation still applies to a value
   * without a timestamp version that was read before the booking was seen (see `listing/reservations.ts`).
   */
  observedAt?: number;
  /** The record's cursor as the source gave it, for `inventory explain`. */
  cursor?: Cursor;
}

/**
 * What became of a SKU in a job. `rate_limited` (the store said 429), `auth_paused` (the store refused
 * the credentials) and `deferred` (another job was writing the SKU) return it to the queue without using
 * an attempt; `isolated` hands a SKU that failed
 * or was refused inside a batch to a job of its own, which retries it or fails with the reason.
 */
export type JobOutcome = 'completed' | 'skipped' | 'retried' | 'failed' | 'rejected' | 'rate_limited' | 'auth_paused' | 'deferred' | 'isolated';

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
  /** The price list the value was read from (`pricelistId`), when not the store's default list. */
  priceListId?: number;
  /** The target that differs (`SKU-1 (site 2, price list WHOLESALE)`), when not the default target (the bare Code). */
  target?: string;
}

/** What a reconcile found and did. */
export interface ReconcileReport {
  dryRun: boolean;
  sources: string[];
  /** Sites read from the store; `null` stands for "no site filter". */
  sites: Array<number | null>;
  /** Price lists read from the store (`pricelistId`) besides its default list: those the ERP records name. */
  priceLists: number[];
  erpRecords: number;
  storeItems: number;
  /** Field differences in total and per field. */
  differences: number;
  perField: Record<string, number>;
  /** Targets with at least one difference (a SKU differing on two sites counts twice). */
  itemsWithDifferences: number;
  /** SKUs with at least one differing target (a SKU differing on two sites counts once). */
  skusWithDifferences: number;
  /** The first differences (up to `sampleSize`). */
  sample: FieldDifference[];
  /**
   * Targets the store lacks: an ERP SKU not on a site its targets are on (a SKU on site 1 only is missing
   * on site 2 when site 2 is one of `inventory.sites`); a default target, when no site read shows it.
   */
  missingOnStore: number;
  /** Their labels (`SKU-1`, `SKU-1 (site 2)`). */
  missingSample: string[];
  /** ERP SKUs the store has only on sites the configuration does not write to: reported, not compared nor created. */
  onOtherSites: number;
  otherSiteSample: Array<{ sku: string; siteIds: number[] }>;
  /** Store items no ERP source has (counted by a full reconcile only: see `orphans.checked`). */
  onlyOnStore: number;
  onlyOnStoreSample: string[];
  /** What became of them under `inventory.reconcile.orphans`. */
  orphans: OrphanReport;
  /** ERP rows refused, whole or in part, whatever refused them (the source's coercion, the store's rules). */
  rejected: number;
  /** Store items that did not fit their schema (parked in `store-rejects` unless dry run; not compared). */
  storeRejected: number;
  /** Jobs added (on a dry run: the jobs that would be added; nothing is written). */
  queued: number;
}

/** The store items no ERP source has, and what a reconcile did with them. */
export interface OrphanReport {
  /** False when the run could not tell: limited to a source or to SKUs, or an enabled source has no snapshot. */
  checked: boolean;
  action: 'report' | 'zero' | 'unpublish';
  /** Of `onlyOnStore`, items the action would change (Stock not 0, or still published for `unpublish`). */
  toChange: number;
  /** SKUs queued for the action (on a dry run: that would be). */
  queued: number;
  /** SKUs the guard held: none acted on; `resync inventory --confirm-orphans` acts on them. */
  held: number;
}

/** What one snapshot diff of one source found and did. */
export interface DiffReport {
  source: string;
  /** Snapshot rows read, valid and refused. */
  read: number;
  /** SKUs in the source's previous complete snapshot (0 on a first diff). */
  previous: number;
  /** SKUs whose values changed since the previous complete snapshot (every SKU on a first diff). */
  changed: number;
  /** Of those, SKUs queued (a SKU a deletion still holds back is not). */
  queued: number;
  /** SKUs that vanished by this diff (their action applied). */
  vanished: number;
  /** SKUs the mass guard holds instead (nothing written for them). */
  held: number;
  /** Rows refused (not coerced, or breaking the store's rules): their SKUs are kept as they were. */
  refused: number;
  /** SKUs named by the deletions query since the last read. */
  deleted: number;
}

/** What the pass at start after a settings change found and did (`reevaluate.ts`). */
export interface ReevaluateReport {
  /** The settings changed since the last start; empty when none did (or on the first start that records them). */
  changed: string[];
  /** Targets whose ERP state was read. */
  targets: number;
  /**
   * Targets queued: their figure under the current settings differs from what the store acknowledged (SCAN
   * may return a key twice while Redis resizes: such a target counts twice, and its second job sends nothing).
   */
  queued: number;
  /** Of those, targets of a site added to `inventory.sites`. */
  newSiteTargets: number;
  /** Failed jobs whose targets were queued again (and the failed jobs removed). */
  failedRequeued: number;
  /**
   * Reconciles queued as control jobs (`settings-reconcile.ts`), one per source a change needs re-read:
   * its `stockRounding` changed, a site was added, a price list's id moved (`why`).
   */
  reconciles: Array<{ source: string; why: string[]; jobId: string }>;
  /** Sources such a change concerns that cannot be reconciled: `disabled`, or `no snapshot` to read. */
  notReconciled: Array<{ source: string; why: string[]; reason: 'disabled' | 'no snapshot' }>;
}

/** What one read of a kits source (`inventory.kits`) found and did. */
export interface KitsReport {
  source: string;
  /** Composition rows read, valid and refused. */
  read: number;
  /** Rows refused (quantity not above 0 or not a number, an empty code): the rest of the composition is used. */
  refused: number;
  /** Kits the source defines now. */
  kits: number;
  /** Kits whose components or quantities changed (added and removed ones included): queued to be re-computed. */
  changed: number;
  /** Cycles refused, each as its codes in order: their kits are not written. */
  cycles: string[][];
}

/** What one poll of a kits source's `changes` query found and did. */
export interface KitChangesReport {
  source: string;
  /** Rows read, valid and refused (rows the overlap re-reads count again). */
  read: number;
  /** Rows refused (quantity not above 0 or not a number, an empty code). */
  refused: number;
  /** Kits whose rows were read complete: their composition replaced, or removed (no component row). */
  kits: number;
  /** Of those, kits now without a composition (a disabled bundle, an archived BoM): no longer kits. */
  removed: number;
  /** Kits whose components or quantities changed (nested ones included): queued to be re-computed. */
  changed: number;
  /** Cycles among the kits written, each as its codes in order: their kits are not written. */
  cycles: string[][];
  /** The cursor stored after the poll. */
  cursor: Cursor;
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
  'inventory:diff:done': DiffReport;
  'inventory:diff:failed': { source: string; error: Error };
  /** Held SKUs a person confirmed: their action is applied. */
  'inventory:vanished:confirmed': { source: string; skus: number };
  /** The pass at start after a change of the settings that decide what targets show (`reevaluate.ts`). */
  'inventory:reevaluate:done': ReevaluateReport;
  /** One read of a kits source. */
  'inventory:kits:done': KitsReport;
  /** A kits source could not be read whole: the last complete composition is kept. */
  'inventory:kits:failed': { source: string; error: Error };
  /** One poll of a kits source's `changes` query. */
  'inventory:kits:changes:done': KitChangesReport;
  /** A poll of a kits source's `changes` query failed: its cursor did not move past what was applied. */
  'inventory:kits:changes:failed': { source: string; error: Error };
}
