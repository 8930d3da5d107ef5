/**
 * Cursor values: how they are normalised, ordered and turned into versions. Timestamps are kept as
 * ISO strings in UTC (`Date.toISOString`: milliseconds; six fraction digits when the ERP's column has
 * microseconds the millisecond does not hold), so that they survive Redis and JSON unchanged and a
 * value read from pg or mysql2 compares correctly with one stored days ago. Digits past the
 * microsecond are dropped, never rounded up: a cursor is never later than the row it came from.
 */
import { dateOfMicros } from './precise-date.js';
import type { Cursor } from './types.js';

/** An ISO 8601 timestamp with a zone; zone-less text is not a timestamp (its meaning would depend on TZ). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const INTEGER = /^-?\d{1,16}$/;
/** A timestamp as `toCursor` stores it (`Date.toISOString` of a Date or a PreciseDate, years 0000–9999). */
const NORMALISED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(\d{3})?Z$/;
/** The fraction of a timestamp's seconds. */
const FRACTION = /\.(\d+)/;

/** Epoch microseconds of timestamp text with a zone (fraction digits past the sixth dropped), or NaN. */
function timestampMicros(text: string): number {
  const fraction = FRACTION.exec(text)?.[1] ?? '';
  const ms = Date.parse(text.replace(' ', 'T').replace(FRACTION, fraction === '' ? '' : `.${fraction.padEnd(3, '0').slice(0, 3)}`));
  if (Number.isNaN(ms)) return Number.NaN;
  return ms * 1000 + Number(fraction.padEnd(6, '0').slice(3, 6));
}

/**
 * Turns a raw cursor column value into a Cursor: Date → ISO UTC string (a PreciseDate keeps its
 * microseconds), integer text (pg bigint, numeric) → number, timestamp text with a zone → normalised
 * ISO string, other text as is.
 */
export function toCursor(value: unknown): Cursor {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return Number(value);
  const text = String(value).trim();
  if (text === '') return null;
  if (INTEGER.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  if (TIMESTAMP.test(text)) {
    const micros = timestampMicros(text);
    if (!Number.isNaN(micros)) return dateOfMicros(micros).toISOString();
  }
  return text;
}

/** True for a timestamp cursor (an ISO string with a zone), which polls re-read with an overlap. */
export function isTimestampCursor(cursor: Cursor): boolean {
  return typeof cursor === 'string' && TIMESTAMP.test(cursor) && !Number.isNaN(Date.parse(cursor.replace(' ', 'T')));
}

/** Epoch microseconds of a timestamp cursor (see `isTimestampCursor`), or NaN for any other cursor. */
export function cursorMicros(cursor: Cursor): number {
  return typeof cursor === 'string' && TIMESTAMP.test(cursor) ? timestampMicros(cursor) : Number.NaN;
}

/** Rank of a cursor's kind: null first, then numbers, then timestamps, then other strings. */
function rank(cursor: Cursor): number {
  if (cursor === null) return 0;
  if (typeof cursor === 'number') return 1;
  return isTimestampCursor(cursor) ? 2 : 3;
}

/**
 * Orders two cursors (negative, zero, positive). Null sorts first; numbers numerically; timestamps by
 * instant; other strings lexicographically by code unit (so "10" after "9" only if the ERP pads them).
 * Cursors of different kinds should not meet; if they do, the order is null < number < timestamp < text.
 */
export function compareCursors(a: Cursor, b: Cursor): number {
  // Normalised timestamps of one width (toISOString: UTC) order as text; polls compare thousands per batch.
  if (typeof a === 'string' && typeof b === 'string' && a.length === b.length && NORMALISED.test(a) && NORMALISED.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const left = typeof a === 'string' ? toCursor(a) : a;
  const right = typeof b === 'string' ? toCursor(b) : b;
  const byRank = rank(left) - rank(right);
  if (byRank !== 0) return byRank;
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  if (typeof left === 'string' && typeof right === 'string') {
    if (isTimestampCursor(left)) return timestampMicros(left) - timestampMicros(right);
    return left < right ? -1 : left > right ? 1 : 0;
  }
  return 0;
}

/** The larger of two cursors. */
export function maxCursor(a: Cursor, b: Cursor): Cursor {
  return compareCursors(a, b) >= 0 ? a : b;
}

/**
 * A number usable as a record version (higher = newer): epoch ms for timestamps, the number itself
 * for numbers and integer text. Null for a null cursor and for other strings, which have no numeric
 * meaning (compare those with `compareCursors`).
 */
export function cursorToVersion(cursor: Cursor): number | null {
  // The common case, a timestamp as toCursor stored it, without normalising it again (per record).
  if (typeof cursor === 'string' && NORMALISED.test(cursor)) {
    const ms = Date.parse(cursor);
    if (!Number.isNaN(ms)) return ms;
  }
  const value = typeof cursor === 'string' ? toCursor(cursor) : cursor;
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && isTimestampCursor(value)) return Math.floor(timestampMicros(value) / 1000);
  return null;
}

/**
 * The value a poll starts from: a timestamp cursor moved back by `overlapMs` (so rows committed late
 * with an older timestamp are still read), as a Date for SQL drivers to bind (a PreciseDate when the
 * cursor has microseconds: a bound truncated to the millisecond would page badly); other cursors unchanged.
 *
 * With `previousPollAt` (when the source's last complete poll began, on the ERP's clock at the latest:
 * `PollHistory` in sync/poll-source.ts) the window reaches no further back than `overlapMs` before that
 * instant: a row the last poll could not see committed after it began, so its timestamp is at most
 * `overlapMs` (the longest transaction) older. After a burst the window so shrinks with time instead of
 * re-reading the burst at every poll until newer rows move the cursor. Never past the cursor itself,
 * unless `pastCursor` says that the last poll read every row at the cursor (it caught up there): then,
 * once the window lies wholly after the cursor, no row at the cursor can be new and the read starts one
 * microsecond after it, so rows sharing the cursor (a bulk load) are not read again by every poll.
 */
export function pollStart(cursor: Cursor, overlapMs: number, previousPollAt?: number, pastCursor = false): Date | number | string | null {
  if (typeof cursor === 'string' && isTimestampCursor(cursor)) {
    const at = timestampMicros(cursor);
    const overlap = overlapMs * 1000;
    if (previousPollAt === undefined) return dateOfMicros(at - overlap);
    const windowStart = previousPollAt * 1000 - overlap;
    if (pastCursor && windowStart > at) return dateOfMicros(at + 1);
    return dateOfMicros(Math.min(at, Math.max(at - overlap, windowStart)));
  }
  return cursor;
}
