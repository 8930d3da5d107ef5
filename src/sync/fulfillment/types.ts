/**
 * Shapes the fulfillment flow shares between its producer (ERP shipment sources), its worker (the
 * guarded sale update) and the CLI: the update, job data, reports and events.
 */
import type { Cursor } from '../../erp/types.js';

/** The sale fields a shipment update may set. */
export const FULFILLMENT_UPDATE_FIELDS = ['Status', 'StatusText', 'TrackingCode', 'Obeservations'] as const;

/** A shipment update: any of the fields above. */
export interface FulfillmentUpdate {
  Status?: number;
  StatusText?: string;
  TrackingCode?: string;
  Obeservations?: string;
}

/** Data of a `fulfillment` job. */
export interface FulfillmentJobData {
  saleId: number;
  update: FulfillmentUpdate;
  /** Move a sale out of a final status (Delivered, Rejected, Cancelled). */
  force?: boolean;
  /** Order of the ERP change (from the record's cursor): an older update never overwrites a newer one. */
  version?: number;
  /** Where the update came from, for messages. */
  source?: string;
  ref?: string;
}

/** What applying an update did. */
export type FulfillmentOutcome = 'updated' | 'unchanged' | 'stale';

/** The result of one update. */
export interface FulfillmentResult {
  saleId: number;
  outcome: FulfillmentOutcome;
  /** The fields whose values changed on the store. */
  changed: string[];
}

/** One poll of one shipment source. */
export interface FulfillmentPollReport {
  source: string;
  read: number;
  rejected: number;
  queued: number;
  cursor: Cursor;
}

/** Lifecycle events of the fulfillment flow. */
export interface FulfillmentEvents extends Record<string, unknown> {
  'fulfillment:poll:done': FulfillmentPollReport;
  'fulfillment:poll:failed': { source: string; error: Error };
  /** An ERP shipment record refused before it was queued (the activity log warns of it). */
  'fulfillment:record:refused': { source: string; reason: string };
  'fulfillment:job:done': FulfillmentResult;
  'fulfillment:job:failed': { saleId: number; error: Error; willRetry: boolean };
  /** A job held (`auth_paused`) while the store refuses the credentials: it stays queued and runs once they are right. */
  'fulfillment:job:held': { saleId: number };
}
