/**
 * The contract between ERP connectors and the flows: a source hands out batches of changed records,
 * each with a cursor, and is told (`commit`) once those records are durably queued.
 */
import type { ValidationIssue } from '../errors.js';

/**
 * Where a source has read up to. Timestamps are ISO strings in UTC with millisecond precision
 * (`2024-05-01T12:00:00.000Z`); counters are numbers; anything else is an opaque string.
 */
export type Cursor = string | number | null;

/** One record from the ERP, its columns renamed to canonical field names and coerced to their types. */
export interface SourceRecord {
  /** Where the record came from, for messages: `orders view row cursor=… code=…`, `file x.csv line 12`. */
  ref: string;
  /** The record's own cursor value (null when the source has none, as in some snapshots). */
  cursor: Cursor;
  /** Only the fields the source provided: a stock-only source yields Code and Stock. */
  fields: Record<string, unknown>;
  /**
   * The raw row's key (`rowKey` in polling.ts), set when the read was given `known`: the caller
   * remembers the delivered record under it, so that the overlap's re-read of the row is recognised
   * before it is normalised.
   */
  rowKey?: string;
  /**
   * Fields the source refused and left out while the rest of the row flows (a fractional Stock under
   * `stockRounding: reject`), each issue naming the record, field, value and rule: the flows count the
   * row as refused and report these, and still take its other fields.
   */
  refused?: ValidationIssue[];
}

/** One chunk of a snapshot: its records, and the rows of the chunk the source refused whole (to count them). */
export type SnapshotChunk = SourceRecord[] & { rejected?: readonly RejectedRecord[] };

/** A record that could not be coerced; it is reported and never queued. */
export interface RejectedRecord {
  ref: string;
  issues: ValidationIssue[];
}

/** A file a CSV source left for a later poll: it changed less than `settleMs` ago (it may still be written). */
export interface UnsettledFile {
  file: string;
  /** How long ago it changed, in ms. */
  ageMs: number;
  settleMs: number;
}

/** What one `readChanges` call returns. */
export interface ChangeBatch {
  records: SourceRecord[];
  rejected: RejectedRecord[];
  /** Files left for a later poll, still settling (CSV sources; absent when none was). */
  unsettled?: UnsettledFile[];
  /** The highest cursor seen, never behind the one passed in: what the caller stores once queued. */
  nextCursor: Cursor;
  /**
   * Where the next read of the same poll continues (without overlap): the batch's last cursor, which
   * may still lie inside the overlap window, behind `nextCursor`. Absent: continue from `nextCursor`.
   */
  resumeFrom?: Cursor;
  /**
   * The raw key of the batch's last keyed row, at `resumeFrom`, for a source that pages by key (see
   * polling.ts): the next read of the same poll passes it as `ReadOptions.afterKey`.
   */
  resumeKey?: string | number;
  /** Opaque, JSON-serialisable state `commit` needs (the CSV source lists its files here). */
  handle?: unknown;
  /** Rows read but left out because `ReadOptions.known` recognised them (they count as read). */
  known?: number;
}

/**
 * Rows an earlier poll of this process delivered, by raw row key: the overlap re-reads every row of
 * its window at every poll (a minute of changes polled every second: each row sixty times), and a
 * recognised row is only counted, its cursor taken from here, instead of being normalised again.
 */
export interface KnownRows {
  /** The cursor of the row delivered under `rowKey`, or undefined for a row not delivered. */
  cursorOf(rowKey: string): Cursor | undefined;
}

/** Options of one `readChanges` call. */
export interface ReadOptions {
  /** Start the source's overlap before the cursor (default true). */
  overlap?: boolean;
  /**
   * When the source's last complete poll began (ms): the overlap then reaches back no further than the
   * overlap before that instant (`pollStart`). Unknown (a first poll, a restart): the whole overlap.
   */
  previousPollAt?: number;
  /**
   * The last poll read every row at `cursor` (it ended caught up there): with `previousPollAt`, the read
   * may start just after the cursor (`pollStart`).
   */
  pastCursor?: boolean;
  /** Rows already delivered: left out of the batch (see `KnownRows`); polled sources (SQL, HTTP) use it. */
  known?: KnownRows;
  /**
   * With `overlap: false`, the previous batch's `resumeKey`: read rows with (cursor, key) after
   * (`cursor`, this key) instead of cursor >= `cursor` (sources that page by key; others ignore it).
   */
  afterKey?: string | number;
  /**
   * The limit a source without a tiebreak may raise a read to, `TIE_LIMIT_FACTOR` times over, to get past
   * rows sharing one cursor (polling.ts). @defaultValue the read's `limit`; a preview reading fewer rows
   * than the source's `limit` passes that, so it fails only where the daemon would.
   */
  tieLimit?: number;
}

/** Options of a `snapshot` read. */
/** A connector kind. */
export type SourceKind = 'sql' | 'csv' | 'http';

/** An ERP connector: reads changes since a cursor, and optionally the full current set. */
export interface ChangeSource {
  readonly name: string;
  readonly kind: SourceKind;
  /**
   * Records changed at or after `cursor`, at most about `limit` of them. With `overlap` (the default; the
   * first read of a poll) the read starts the source's overlap before `cursor`, so rows committed late
   * are seen; the reads that continue the same poll pass `overlap: false`.
   */
  readChanges(cursor: Cursor, limit: number, options?: ReadOptions): Promise<ChangeBatch>;
  /** Called after the batch's records are durably queued (CSV: files move to processed/ or rejected/). */
  commit?(batch: ChangeBatch): Promise<void>;
  /**
   * The full current set, in chunks, streamed (used by the reconcile and the snapshot diff); a chunk
   * carries the rows the source refused whole (`rejected`): the reconcile and the diff count them, and
   * the diff keeps their SKUs as they were rather than count them vanished.
   */
  snapshot?(): AsyncIterable<SnapshotChunk>;
  /**
   * SKUs deleted at or after `cursor` (the `deletions` query: records of `Code` and a cursor), read by
   * the same rules as `readChanges`; each is treated as vanished.
   */
  readDeletions?(cursor: Cursor, limit: number, options?: ReadOptions): Promise<ChangeBatch>;
  /** Releases connections; the source cannot be used afterwards. */
  close(): Promise<void>;
}
