/** What every source factory is given, and the helpers they share. */
import type { Logger } from '../log.js';
import type { FieldCatalog } from './fields.js';
import type { RejectedRecord, SnapshotChunk, SourceRecord } from './types.js';

/** Dependencies of a source: the field catalogue it fills, a logger and a clock. */
export interface SourceDeps {
  /** The fields this source's records may carry (`INVENTORY_FIELDS`, `FULFILLMENT_FIELDS`). */
  fields: FieldCatalog;
  logger: Logger;
  /** The clock (epoch ms); tests pass a fixed one. @defaultValue Date.now */
  now?: () => number;
}

/** Logs each column that matches no field once per source, at debug: it is usually an extra column of a view. */
export function ignoredColumnLogger(logger: Logger): (column: string) => void {
  const seen = new Set<string>();
  return (column) => {
    if (seen.has(column)) return;
    seen.add(column);
    logger.debug({ column }, 'column matches no field and is ignored');
  };
}

/** A snapshot chunk: the records, carrying the refused rows only when there are some. */
export function snapshotChunk(records: SourceRecord[], rejected: readonly RejectedRecord[]): SnapshotChunk {
  return rejected.length === 0 ? records : Object.assign(records, { rejected });
}
