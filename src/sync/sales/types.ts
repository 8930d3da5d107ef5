/**
 * Shapes the sales flow shares between its producer (the pull), its worker (export then acknowledge),
 * the CLI and tests: job data, reports and lifecycle events.
 */
import type { PagingStopReason } from '../../store/sales.js';
import type { CheckReport } from '../inventory/listing/index.js';

/** Data of a `sales` job: the sale's key, and a small snapshot for the dashboard. */
export interface SalesJobData {
  saleId: number;
  siteId: number;
  /** Export again even if the state says exported (the sink's own idempotency still applies). */
  force?: boolean;
  /** What the dashboard shows; the worker always reads the sale again from the store. */
  snapshot?: {
    status: number | null;
    total: number | null;
    creationDate: string | null;
    externalReference: string | null;
    customer: string | null;
  };
}

/** What the pull decided for one sale (listed on a dry run). */
export type PullAction = 'export' | 'ack' | 'queued-before' | 'retried' | 'refused' | 'done' | 'settling' | 'other-status';

/** One sale in a dry-run listing. */
export interface PulledSale {
  saleId: number;
  siteId: number;
  status: number | null;
  creationDate: string | null;
  total: number | null;
  action: PullAction;
}

/** What one pull saw and did. */
export interface PullReport {
  dryRun: boolean;
  /** The site filter sent to the store (null: none, or several sites: see `siteIds`). */
  siteId: number | null;
  /** The sites read, one query each, in order (empty: one query without a site filter). */
  siteIds: number[];
  /**
   * The query window, as sent (`YYYY-MM-DD`, store zone); null in external-reference mode. Each site has
   * its own watermark: over several sites, from the earliest start to the latest end.
   */
  from: string | null;
  to: string | null;
  statuses: number[];
  /** Sales returned by the store (each counted once). */
  seen: number;
  /** Jobs added by this pull (on a dry run: jobs that would be added). */
  queued: number;
  /** Sales whose job already existed (waiting, running or delayed; failed ones on a dry run). */
  alreadyQueued: number;
  /** Sales whose job had failed (attempts used up) and was retried with fresh attempts. */
  retried: number;
  /** Sales whose job failed permanently (a refusal, not an outage): left failed for an admin to look at. */
  refused: number;
  /** Sales already exported and acknowledged. */
  done: number;
  /** Sales younger than `settleMinutes`, left for a later pull. */
  skippedSettling: number;
  /** Sales whose status is not among those pulled (a store ignoring the filter). */
  skippedStatus: number;
  /**
   * Sales naming another site than the one asked for (a store ignoring the `siteId` filter), read site
   * by site from `inventory.sites`: left to their own site's read, not counted in `seen`.
   */
  skippedSite: number;
  /** Sales the store sent that did not fit (parked in `store-rejects`, read again by the next pull). */
  rejected: number;
  /** Why paging stopped before an empty page (the watermark then stays), or null. */
  pagingStopped: PagingStopReason | null;
  /** Per-sale decisions; filled on dry runs only, so reports of big pulls stay small. */
  sales: PulledSale[];
}

/** What the worker did with one sale. */
export interface SaleOutcome {
  saleId: number;
  siteId: number;
  erpRef: string | null;
  /** True when this run exported the sale (false: the state or the sink already had it). */
  exported: boolean;
  /** True when this run acknowledged the sale on the store. */
  acked: boolean;
}

/** Lifecycle events of the sales flow. */
export interface SalesEvents extends Record<string, unknown> {
  'sales:pull:done': PullReport;
  'sales:pull:failed': { error: Error };
  'sales:exported': { saleId: number; siteId: number; erpRef: string; created: boolean };
  'sales:acked': { saleId: number; siteId: number; erpRef: string };
  'sales:job:done': SaleOutcome;
  'sales:job:failed': { saleId: number; siteId: number; error: Error; willRetry: boolean };
  /** A scheduled reservation round (`inventory.reservations.schedule`) ended. */
  'reservations:checked': CheckReport;
  'reservations:check:failed': { error: Error };
}
