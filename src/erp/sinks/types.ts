/**
 * A sales sink hands one store sale to the ERP. Every sink is idempotent on (site, sale id): exporting
 * the same sale again is a no-op that returns the same `erpRef`, which is what makes a crash between
 * the export and the store acknowledgement harmless.
 */
import type { Sale } from '../../store/schemas/index.js';

/** The outcome of one export. */
export interface ExportResult {
  /** The reference written into the store's acknowledgement (`{erpRef}` in `sales.ack.observations`). */
  erpRef: string;
  /** False when the ERP already had the sale (a repeated export changed nothing). */
  created: boolean;
}

/** A sale the ERP has booked, and when (its `erp_processed_at`, ms). */
export interface ProcessedSale {
  siteId: number;
  saleId: number;
  processedAt: number;
}

/** A sale the ERP has not booked yet, with its quantities per SKU. */
export interface UnprocessedSale {
  siteId: number;
  saleId: number;
  /** When storesync wrote it (ms). */
  receivedAt: number;
  lines: Map<string, number>;
}

/** Where sales go: interface tables, an HTTP endpoint, a folder of JSON files. */
export interface SalesSink {
  readonly kind: 'sql' | 'http' | 'file';
  /** The sales among `keys` the ERP has booked (sinks that can tell: the SQL interface tables). */
  processed?(keys: ReadonlyArray<{ siteId: number; saleId: number }>): Promise<ProcessedSale[]>;
  /** Every exported sale the ERP has not booked yet (sinks that can tell), to rebuild reservations. */
  unprocessed?(): Promise<UnprocessedSale[]>;
  /** Throws a clear, non-retryable error when the sink cannot work as configured (missing tables). */
  check(): Promise<void>;
  /** Exports the sale pulled for `siteId`; retryable failures throw a retryable `ErpError`. */
  export(sale: Sale, siteId: number): Promise<ExportResult>;
  close(): Promise<void>;
}

/** The reference used when the ERP gives none of its own: `<site>-<sale id>`. */
export function defaultErpRef(siteId: number, saleId: number): string {
  return `${siteId}-${saleId}`;
}
