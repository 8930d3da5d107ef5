/**
 * Shapes the fulfilment flow shares between its producer (ERP shipment sources), its worker (the
 * guarded sale update) and the CLI: the update, job data, reports and events.
 */
import type { Cursor } from '../../erp/types.js';

/** The sale fields a shipment update may set. */
export const FULFILMENT_UPDATE_FIELDS = ['Status', 'StatusText', 'TrackingCode', 'Obeservations'] as const;

/** A shipment update: any of the fields above. */
export interface FulfilmentUpdate {
  Status?: number;
  StatusText?: string;
  TrackingCode?: string;
  Obeservations?: string;
}

/** Data of a `fulfillment` job. */
export interface FulfilmentJobData {
  saleId: number;
  update: FulfilmentUpdate;
  /** Move a sale out of a final status (Delivered, Rejected, Cancelled). */
  force?: boolean;
  /** Order of the ERP change (from the record's cursor): an older update never overwrites a newer one. */
  version?: number;
  /** Where the update came from, for messages. */
  source?: string;
  ref?: string;
}

/** What applying an update did. */
export type FulfilmentOutcome = 'updated' | 'unchanged' | 'stale';

/** The result of one update. */
export interface FulfilmentResult {
  saleId: number;
  outcome: FulfilmentOutcome;
  /** The fields whose values changed on the store. */
  changed: string[];
}

/** One poll of one shipment source. */
export interface FulfilmentPollReport {
  source: string;
  read: number;
  rejected: number;
  queued: number;
  cursor: Cursor;
}

/** Lifecycle events of the fulfilment flow. */
export interface FulfilmentEvents extends Record<string, unknown> {
  'fulfilment:poll:done': FulfilmentPollReport;
  'fulfilment:poll:failed': { source: string; error: Error };
  'fulfilment:job:done': FulfilmentResult;
  'fulfilment:job:failed': { saleId: number; error: Error; willRetry: boolean };
}
