/**
 * Polling with a cursor, shared by the SQL and HTTP sources. A poll asks for rows with
 * `cursor >= start`, ordered by cursor, where `start` is the last cursor moved back by the overlap
 * (timestamp cursors only) so that rows committed late with an older timestamp are still read; the
 * re-read rows are harmless because every store write is an idempotent "set".
 *
 * The overlap applies to the first read of a poll only; the reads that continue it start at the last
 * cursor of the previous batch (`resumeFrom`), so a busy overlap window is paged through once instead
 * of being re-read by every round.
 *
 * Rows sharing one cursor (a bulk load under one timestamp) are paged with a tiebreak when the source
 * takes one (`PollSettings.pagesByKey`: a SQL query using `:afterKey`, an HTTP source with an
 * `afterKeyParam`): a read that continues a poll asks for rows with `(cursor, key) > (resumeFrom,
 * resumeKey)`, the last row's cursor and raw key, so any number of rows under one cursor is read in
 * pages of `limit`. A row carrying a `pageKey` column is paged after that value instead of its key, for
 * a source whose key repeats (one row per item and price list). Without a tiebreak, a full batch whose
 * rows all share one cursor would return the same rows forever, so the read asks again with twice the
 * limit, up to `TIE_LIMIT_FACTOR` times the configured limit (`ReadOptions.tieLimit`, for a preview), and
 * then fails loudly, naming the tiebreak that fits: the key, or a key unique per row when it repeats.
 *
 * A first poll (no stored cursor, no `initialCursor`) that reads nothing is suspicious: the classic
 * `WHERE changed_at > :cursor` compares with NULL then and reads nothing, at every poll, forever,
 * because the cursor never moves. The source logs one warning per process naming the fix.
 *
 * Given the rows a poll already delivered (`ReadOptions.known`), a read recognises a re-read row by its
 * raw key before normalising it: it only counts the row and takes its cursor from what was delivered.
 * With the default overlap of a minute, a steady 200 changes/s keeps 12,000 rows in the window, each
 * re-read at every 1 s poll (bench/README.md, "cli").
 */
import { ErpError } from '../errors.js';
import type { Logger } from '../log.js';
import { compareCursors, maxCursor, pollStart, toCursor } from './cursor.js';
import { type FieldCatalog, normalizeRecord, PAGE_KEY_COLUMN, rawKeyOf, type StockRounding } from './fields.js';
import { epochMicros } from './precise-date.js';
import { ignoredColumnLogger, type SourceDeps } from './source-deps.js';
import type { DeferredRows } from './sql-types.js';
import type { ChangeBatch, Cursor, KnownRows, ReadOptions, RejectedRecord, SourceRecord } from './types.js';

/** How far a poll may raise its limit to get past a group of rows sharing one cursor (sources without a tiebreak). */
export const TIE_LIMIT_FACTOR = 64;

/** How a read pages. */
export interface ReadPage {
  /**
   * Null: rows with cursor >= `start`. Otherwise the raw key of the last row read: rows with
   * (cursor, key) > (`start`, `afterKey`) (only for sources with `pagesByKey`).
   */
  afterKey: string | number | null;
  /** True for a read that continues a poll (no overlap): a source must not widen its start then. */
  continues: boolean;
}

/**
 * Reads raw rows after `start` (null: from the beginning; see `ReadPage`), ordered by cursor then key, at
 * most `limit`; or the rows with their date and timestamp columns still text, and how to parse a row's
 * (`SqlClient.queryDeferred`): a re-read row the poll already delivered is then recognised by its text and
 * never parsed.
 */
export type RowReader = (start: Date | number | string | null, limit: number, page: ReadPage) => Promise<Record<string, unknown>[] | DeferredRows>;

/** Rows as read, and how to parse one (the identity when the reader parsed them already). */
interface ReadRows {
  rows: readonly Record<string, unknown>[];
  revive?: DeferredRows['revive'];
}

const asReadRows = (read: Record<string, unknown>[] | DeferredRows): ReadRows => (Array.isArray(read) ? { rows: read } : read);

/** What a poll needs to know about its source. */
export interface PollSettings {
  /** Source name, for refs and errors. */
  source: string;
  /** What a row is called in refs: `row` (SQL), `record` (HTTP). */
  rowNoun: string;
  overlapMs: number;
  catalog: FieldCatalog;
  mapping: Readonly<Record<string, string>>;
  logger: Logger;
  /** Told about each column that matches no field. */
  onIgnored: (column: string) => void;
  /** Told when a read from a null cursor returns no row (warns once per source). */
  onEmptyFirstPoll: () => void;
  /** The reader honours `ReadPage.afterKey` (see the module comment). */
  pagesByKey: boolean;
  /** How to give this source a tiebreak, for the message of a tie group it cannot get past. */
  tiebreakHint: string;
  /** The same when the group repeats a key (one row per item and price list): a key unique per row, as `pageKey`. */
  perRowKeyHint: string;
  /** What a fractional Stock becomes (the source's `stockRounding`). @defaultValue 'floor' */
  stockRounding?: StockRounding;
}

/** A source that cannot page rows sharing one cursor (`pollSettingsFor`'s default). */
const NO_TIEBREAK: Tiebreak = {
  pagesByKey: false,
  hint: 'give the source a tiebreak (a SQL query: :afterKey; an HTTP source: afterKeyParam)',
  perRowHint: 'give the source a tiebreak on a key unique per row, returned as pageKey (a SQL query: :afterKey; an HTTP source: afterKeyParam)',
};

/** Whether a source pages rows sharing one cursor by key, and how to make it (by its key, by a key unique per row). */
export interface Tiebreak {
  pagesByKey: boolean;
  hint: string;
  perRowHint: string;
}

/**
 * The settings of a polled source (SQL, HTTP), with its child logger; `firstPollHint` says how to make
 * a first poll read from the start (logged, once, when one reads nothing); `tiebreak` whether the
 * source pages rows sharing one cursor by key, and how to make it (for the error when it cannot).
 */
export function pollSettingsFor(
  config: { name: string; overlapMs: number; mapping: Readonly<Record<string, string>>; stockRounding?: StockRounding | undefined },
  deps: SourceDeps,
  rowNoun: string,
  firstPollHint: string,
  tiebreak: Tiebreak = NO_TIEBREAK,
): PollSettings {
  const logger = deps.logger.child({ source: config.name });
  let warned = false;
  return {
    source: config.name,
    rowNoun,
    overlapMs: config.overlapMs,
    catalog: deps.fields,
    mapping: config.mapping,
    logger,
    onIgnored: ignoredColumnLogger(logger),
    pagesByKey: tiebreak.pagesByKey,
    tiebreakHint: tiebreak.hint,
    perRowKeyHint: tiebreak.perRowHint,
    ...(config.stockRounding === undefined ? {} : { stockRounding: config.stockRounding }),
    onEmptyFirstPoll() {
      if (warned) return;
      warned = true;
      logger.warn(
        `source ${config.name}: the first poll (no stored cursor, no initialCursor) read no ${rowNoun}s. ` +
          `If the ERP has data, ${firstPollHint} (logged once)`,
      );
    },
  };
}

/**
 * A raw row as one string, column by column (name, type, value), such that two rows get the same key
 * only when they have the same columns in the same order with the same values of the same types, and
 * so normalise alike. Undefined for a row holding a value of another kind (an object, a Buffer), which
 * is then always normalised.
 */
export function rowKey(raw: Readonly<Record<string, unknown>>): string | undefined {
  let key = '';
  for (const column of Object.keys(raw)) {
    const value = raw[column];
    key += `${column.length}:${column}`;
    if (typeof value === 'string') key += `s${value.length}:${value}`;
    else if (typeof value === 'number') key += Object.is(value, -0) ? 'n-0\u0000' : `n${value}\u0000`;
    else if (value === null) key += 'z';
    else if (value === undefined) key += 'u';
    else if (typeof value === 'boolean') key += value ? 't' : 'f';
    else if (typeof value === 'bigint') key += `b${value}\u0000`;
    else if (value instanceof Date) key += `d${epochMicros(value)}\u0000`;
    else return undefined;
  }
  return key;
}

/** Raw rows sorted into records and rejects, with every row's cursor (rejected rows advance the poll too). */
export interface BatchParts {
  records: SourceRecord[];
  rejected: RejectedRecord[];
  cursors: Cursor[];
  /** Rows `known` recognised: counted and their cursors kept, nothing else. */
  known: number;
}

/** A raw key as a query parameter: text or a number (a Buffer, a bigint as text); undefined for none. */
function keyParam(raw: unknown): string | number | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === 'string' || typeof raw === 'number') return raw;
  if (Buffer.isBuffer(raw)) return raw.toString('utf8');
  return typeof raw === 'bigint' || typeof raw === 'boolean' ? String(raw) : undefined;
}

/** What a row is paged after: its `pageKey` column when it has one, else its raw key (the column that becomes `Code`). */
function pageKeyOf(row: Readonly<Record<string, unknown>>, settings: PollSettings): string | number | undefined {
  const column = Object.keys(row).find((name) => name.toLowerCase() === PAGE_KEY_COLUMN);
  return keyParam(column === undefined ? rawKeyOf(row, settings.catalog, settings.mapping) : row[column]);
}

/** The raw key of the last row that has one, and its cursor (a keyless row cannot be paged after). */
function lastKeyed(
  rows: readonly Record<string, unknown>[],
  cursors: readonly Cursor[],
  settings: PollSettings,
  parsed: (row: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>,
): { cursor: Cursor; key: string | number } | undefined {
  const keyField = Object.entries(settings.catalog).find(([, spec]) => spec.required)?.[0];
  if (keyField === undefined) return undefined;
  for (let index = rows.length - 1; index >= 0; index -= 1) {
    const key = pageKeyOf(parsed(rows[index] as Record<string, unknown>), settings);
    if (key !== undefined) return { cursor: cursors[index] ?? null, key };
  }
  return undefined;
}

/** The first raw key (the column that becomes `Code`) that several rows share, and how many do. */
function repeatedKey(rows: readonly Record<string, unknown>[], settings: PollSettings): { key: string | number; rows: number } | undefined {
  const counts = new Map<string | number, number>();
  for (const row of rows) {
    const key = keyParam(rawKeyOf(row, settings.catalog, settings.mapping));
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const [key, count] of counts) if (count > 1) return { key, rows: count };
  return undefined;
}

/** How to get past a tie group: by the rows' key, or, when it repeats among them, by a key unique per row. */
function tiebreakAdvice(rows: readonly Record<string, unknown>[], settings: PollSettings): string {
  const repeated = repeatedKey(rows, settings);
  if (repeated === undefined) return settings.tiebreakHint;
  return `their key is not unique per ${settings.rowNoun} (${JSON.stringify(repeated.key)}: ${repeated.rows} ${settings.rowNoun}s), so paging on it would skip ${settings.rowNoun}s: ${settings.perRowKeyHint}`;
}

/**
 * Normalises raw rows; with `requireCursor`, a row without a cursor is a configuration error. A row
 * `known` recognises is left out (its cursor still counts); the others carry their `rowKey`. With
 * `revive`, the rows' dates are still text: the key is taken from that text, and only a row `known` does
 * not recognise is parsed (`revive`) and normalised.
 */
export function toBatchParts(
  rows: readonly Record<string, unknown>[],
  settings: PollSettings,
  requireCursor: boolean,
  known?: KnownRows,
  revive?: DeferredRows['revive'],
): BatchParts {
  const records: SourceRecord[] = [];
  const rejected: RejectedRecord[] = [];
  const cursors: Cursor[] = [];
  let recognised = 0;
  const key = Object.entries(settings.catalog).find(([, spec]) => spec.required)?.[0];
  rows.forEach((raw, index) => {
    const rawKey = known ? rowKey(raw) : undefined;
    const deliveredCursor = rawKey === undefined ? undefined : known?.cursorOf(rawKey);
    if (deliveredCursor !== undefined) {
      cursors.push(deliveredCursor);
      recognised += 1;
      return;
    }
    const provisional = `${settings.source} ${settings.rowNoun} ${index + 1} of the batch`;
    const result = normalizeRecord(revive ? revive(raw) : raw, settings.catalog, {
      mapping: settings.mapping,
      ref: provisional,
      onIgnored: settings.onIgnored,
      ...(settings.stockRounding === undefined ? {} : { stockRounding: settings.stockRounding }),
    });
    const cursor = toCursor(result.cursor);
    if (cursor === null && requireCursor) {
      throw new ErpError(
        settings.source,
        `${provisional} has no cursor: the changes query must return a column named "cursor" (or map one to it)`,
        { code: 'ERR_ERP_CURSOR', retryable: false },
      );
    }
    cursors.push(cursor);
    const keyValue = key === undefined || !('fields' in result) ? undefined : result.fields[key];
    const ref = `${settings.source} ${settings.rowNoun} cursor=${String(cursor)}${keyValue === undefined ? '' : ` ${key}=${String(keyValue)}`}`;
    if ('fields' in result) {
      const record: SourceRecord = rawKey === undefined ? { ref, cursor, fields: result.fields } : { ref, cursor, fields: result.fields, rowKey: rawKey };
      records.push(result.refused ? { ...record, refused: result.refused.map((issue) => (issue.record === provisional ? { ...issue, record: ref } : issue)) } : record);
    } else rejected.push({ ref, issues: result.issues.map((issue) => (issue.record === provisional ? { ...issue, record: ref } : issue)) });
  });
  return { records, rejected, cursors, known: recognised };
}

/** Reads one batch of changes after `cursor`, paging by key or raising the limit past tie groups; see the module comment. */
export async function pollChanges(
  cursor: Cursor,
  limit: number,
  settings: PollSettings,
  read: RowReader,
  options: ReadOptions = {},
): Promise<ChangeBatch> {
  const continues = options.overlap === false;
  const start = continues ? pollStart(cursor, 0) : pollStart(cursor, settings.overlapMs, options.previousPollAt, options.pastCursor === true);
  const afterKey = settings.pagesByKey && continues && options.afterKey !== undefined ? options.afterKey : null;
  const cap = Math.max(limit, options.tieLimit ?? limit) * TIE_LIMIT_FACTOR;
  let current = limit;
  for (;;) {
    const { rows, revive } = asReadRows(await read(start, current, { afterKey, continues }));
    if (cursor === null && rows.length === 0) settings.onEmptyFirstPoll();
    const { records, rejected, cursors, known } = toBatchParts(rows, settings, true, options.known, revive);
    // The paging and the tie advice read the rows' keys as parsed, as without deferred dates.
    const parsed = (row: Readonly<Record<string, unknown>>) => (revive ? revive(row) : row);
    const seenMax = cursors.reduce<Cursor>((max, c) => maxCursor(max, c), null);
    const seenMin = cursors.reduce<Cursor>((min, c) => (min === null || compareCursors(c, min) < 0 ? c : min), null);
    const batch: ChangeBatch = { records, rejected, nextCursor: maxCursor(cursor, seenMax), resumeFrom: seenMax ?? cursor, ...(known > 0 ? { known } : {}) };
    // Paged by key: the next read continues after the last keyed row, whatever cursor the rows share.
    const keyed = settings.pagesByKey && rows.length > 0 ? lastKeyed(rows, cursors, settings, parsed) : undefined;
    if (keyed) return { ...batch, resumeFrom: keyed.cursor, resumeKey: keyed.key };
    const stalled = rows.length >= current && compareCursors(seenMin, seenMax) === 0;
    if (!stalled) return batch;
    const advice = tiebreakAdvice(rows.map(parsed), settings);
    if (current >= cap) {
      throw new ErpError(
        settings.source,
        `more than ${cap} ${settings.rowNoun}s share cursor ${String(seenMax)}: ${advice} (or raise the source limit, or use a finer cursor)`,
        { code: 'ERR_ERP_CURSOR', retryable: false },
      );
    }
    current = Math.min(current * 2, cap);
    // The logger is the source's child: it names the source already.
    settings.logger.warn({ cursor: seenMax, limit: current }, `full batch without progress: raising the limit for this poll; ${advice}`);
  }
}
