/**
 * What a polled source's overlap window already delivered, per source and in memory. A timestamp
 * cursor is re-read from `overlapMs` before the stored cursor at every poll (so rows committed late
 * with an older timestamp are still seen); without this memory every re-read row would be validated,
 * merged and queued again at every tick (a minute of changes polled every second: each row sixty
 * times). A record is remembered by its key, its version and its values only once it is durably
 * merged and queued, so skipping it later loses nothing: a late-committed row is a different record
 * and is not in the memory. Entries fall out once their version is older than the window (no poll
 * reads them again), and the memory never holds more than `maxEntries` (the oldest go first: a row
 * forgotten too early is only merged once more, as without this memory). A restarted daemon starts
 * empty and re-merges the window once, which is harmless.
 *
 * A record read with its raw row's key (`rowKey` in erp/polling.ts) is remembered by that key instead,
 * with its cursor, and as `KnownRows` the window lets the next reads recognise the re-read row before
 * normalising it: of the work a re-read costs, only the SQL read and the key remain. Those entries are
 * forgotten in delivery order, up to the first one still inside the window: a row delivered after a
 * newer one (committed late) outlives its window a little, behind a row stamped in the future until that
 * one ages out or `maxEntries` drops it. Memory only: a remembered row is one that was delivered.
 */
import type { Cursor, KnownRows } from '../erp/types.js';

/** The identity of a delivered record. */
export interface DeliveredRecord {
  /** The record's key (the SKU). */
  key: string;
  /** Its version (ms of its timestamp cursor). */
  version: number;
  /** Its values, in the order the source normalised them. */
  fields: Readonly<Record<string, unknown>>;
  /** The raw row's key and the record's cursor, when the read gave them (see `KnownRows`). */
  rowKey?: string;
  cursor?: Cursor;
}

/** Most records remembered per source, of each kind (about 150 bytes each). */
export const DEFAULT_MAX_ENTRIES = 100_000;

/** Records of one source delivered within its overlap window. */
export class DeliveredWindow implements KnownRows {
  readonly #overlapMs: number;
  readonly #maxEntries: number;
  /** Identity → version, of records read without a row key; a Map keeps insertion order, so the oldest entries are first. */
  readonly #seen = new Map<string, number>();
  /** Raw row key → the record's cursor (a timestamp), in delivery order. */
  readonly #rows = new Map<string, string>();

  constructor(overlapMs: number, maxEntries = DEFAULT_MAX_ENTRIES) {
    this.#overlapMs = overlapMs;
    this.#maxEntries = maxEntries;
  }

  /** Records remembered now. */
  get size(): number {
    return this.#seen.size + this.#rows.size;
  }

  /** True when this very record (its raw row; without one, its key, version and values) was delivered before. */
  has(record: DeliveredRecord): boolean {
    const row = rowOf(record);
    return row === undefined ? this.#seen.has(identity(record)) : this.#rows.has(row.key);
  }

  /** `KnownRows`: the cursor of the record delivered from the raw row with this key. */
  cursorOf(rowKey: string): Cursor | undefined {
    return this.#rows.get(rowKey);
  }

  /** Remembers records that are now durably merged and queued. */
  add(records: Iterable<DeliveredRecord>): void {
    for (const record of records) {
      const row = rowOf(record);
      if (row !== undefined) {
        this.#rows.delete(row.key);
        this.#rows.set(row.key, row.cursor);
      } else {
        const id = identity(record);
        this.#seen.delete(id);
        this.#seen.set(id, record.version);
      }
    }
    for (const oldest of this.#seen.keys()) {
      if (this.#seen.size <= this.#maxEntries) break;
      this.#seen.delete(oldest);
    }
    for (const oldest of this.#rows.keys()) {
      if (this.#rows.size <= this.#maxEntries) break;
      this.#rows.delete(oldest);
    }
  }

  /** Forgets what no poll from `cursorVersion` (the stored cursor, ms) will read again. */
  forgetBefore(cursorVersion: number): void {
    const oldest = cursorVersion - this.#overlapMs;
    for (const [id, version] of this.#seen) {
      if (version < oldest) this.#seen.delete(id);
    }
    for (const [rowKey, cursor] of this.#rows) {
      if (!(Date.parse(cursor) < oldest)) break;
      this.#rows.delete(rowKey);
    }
  }
}

function identity(record: DeliveredRecord): string {
  return `${record.key}\u0000${record.version}\u0000${JSON.stringify(record.fields)}`;
}

/** The raw row key a record is remembered by and its cursor, when it came with both (a timestamp cursor). */
function rowOf(record: DeliveredRecord): { key: string; cursor: string } | undefined {
  return record.rowKey !== undefined && typeof record.cursor === 'string' ? { key: record.rowKey, cursor: record.cursor } : undefined;
}
