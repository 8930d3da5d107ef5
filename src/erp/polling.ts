/**
 * Polling with a cursor, shared by the SQL and HTTP sources. A poll asks for rows with
 * `cursor >= start`, ordered by cursor, where `start` is the last cursor moved back by the overlap
 * (timestamp cursors only) so that rows committed late with an older timestamp are still read; the
 * re-read rows are harmless because every store write is an idempotent "set".
 *
 * The overlap applies to the first read of a poll only; the reads that continue it start at the last
 * cursor of the previous batch (`resumeFrom`), so a busy overlap window is paged through once instead
 * of being re-read by every round. A full batch whose rows all share one cursor would return the same
 * rows forever, so the read asks again with twice the limit, up to `TIE_LIMIT_FACTOR` times the
 * configured limit, and then fails loudly.
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
import { type FieldCatalog, normalizeRecord } from './fields.js';
import { ignoredColumnLogger, type SourceDeps } from './source-deps.js';
import type { ChangeBatch, Cursor, KnownRows, ReadOptions, RejectedRecord, SourceRecord } from './types.js';

/** How far a poll may raise its limit to get past a group of rows sharing one cursor. */
export const TIE_LIMIT_FACTOR = 64;

/** Reads raw rows with cursor >= `start` (null: from the beginning), ordered by cursor, at most `limit`. */
export type RowReader = (start: Date | number | string | null, limit: number) => Promise<Record<string, unknown>[]>;

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
}

/**
 * The settings of a polled source (SQL, HTTP), with its child logger; `firstPollHint` says how to make
 * a first poll read from the start (logged, once, when one reads nothing).
 */
export function pollSettingsFor(
  config: { name: string; overlapMs: number; mapping: Readonly<Record<string, string>> },
  deps: SourceDeps,
  rowNoun: string,
  firstPollHint: string,
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
    else if (value instanceof Date) key += `d${value.getTime()}\u0000`;
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

/**
 * Normalises raw rows; with `requireCursor`, a row without a cursor is a configuration error. A row
 * `known` recognises is left out (its cursor still counts); the others carry their `rowKey`.
 */
export function toBatchParts(rows: readonly Record<string, unknown>[], settings: PollSettings, requireCursor: boolean, known?: KnownRows): BatchParts {
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
    const result = normalizeRecord(raw, settings.catalog, {
      mapping: settings.mapping,
      ref: provisional,
      onIgnored: settings.onIgnored,
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
    if ('fields' in result) records.push(rawKey === undefined ? { ref, cursor, fields: result.fields } : { ref, cursor, fields: result.fields, rowKey: rawKey });
    else rejected.push({ ref, issues: result.issues.map((issue) => (issue.record === provisional ? { ...issue, record: ref } : issue)) });
  });
  return { records, rejected, cursors, known: recognised };
}

/** Reads one batch of changes after `cursor`, raising the limit past tie groups; see the module comment. */
export async function pollChanges(
  cursor: Cursor,
  limit: number,
  settings: PollSettings,
  read: RowReader,
  options: ReadOptions = {},
): Promise<ChangeBatch> {
  const start = pollStart(cursor, (options.overlap ?? true) ? settings.overlapMs : 0, options.overlap === false ? undefined : options.previousPollAt);
  const cap = limit * TIE_LIMIT_FACTOR;
  let current = limit;
  for (;;) {
    const rows = await read(start, current);
    if (cursor === null && rows.length === 0) settings.onEmptyFirstPoll();
    const { records, rejected, cursors, known } = toBatchParts(rows, settings, true, options.known);
    const seenMax = cursors.reduce<Cursor>((max, c) => maxCursor(max, c), null);
    const seenMin = cursors.reduce<Cursor>((min, c) => (min === null || compareCursors(c, min) < 0 ? c : min), null);
    const stalled = rows.length >= current && compareCursors(seenMin, seenMax) === 0;
    if (!stalled) return { records, rejected, nextCursor: maxCursor(cursor, seenMax), resumeFrom: seenMax ?? cursor, ...(known > 0 ? { known } : {}) };
    if (current >= cap) {
      throw new ErpError(
        settings.source,
        `more than ${cap} rows share cursor ${String(seenMax)}: raise the source limit or use a finer cursor`,
        { code: 'ERR_ERP_CURSOR', retryable: false },
      );
    }
    current = Math.min(current * 2, cap);
    // The logger is the source's child: it names the source already.
    settings.logger.warn({ cursor: seenMax, limit: current }, 'full batch without progress: raising the limit for this poll');
  }
}
