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
 */
import { ErpError } from '../errors.js';
import type { Logger } from '../log.js';
import { compareCursors, maxCursor, pollStart, toCursor } from './cursor.js';
import { type FieldCatalog, normalizeRecord } from './fields.js';
import { ignoredColumnLogger, type SourceDeps } from './source-deps.js';
import type { ChangeBatch, Cursor, ReadOptions, RejectedRecord, SourceRecord } from './types.js';

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

/** Raw rows sorted into records and rejects, with every row's cursor (rejected rows advance the poll too). */
export interface BatchParts {
  records: SourceRecord[];
  rejected: RejectedRecord[];
  cursors: Cursor[];
}

/** Normalises raw rows; with `requireCursor`, a row without a cursor is a configuration error. */
export function toBatchParts(rows: readonly Record<string, unknown>[], settings: PollSettings, requireCursor: boolean): BatchParts {
  const records: SourceRecord[] = [];
  const rejected: RejectedRecord[] = [];
  const cursors: Cursor[] = [];
  const key = Object.entries(settings.catalog).find(([, spec]) => spec.required)?.[0];
  rows.forEach((raw, index) => {
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
    if ('fields' in result) records.push({ ref, cursor, fields: result.fields });
    else rejected.push({ ref, issues: result.issues.map((issue) => (issue.record === provisional ? { ...issue, record: ref } : issue)) });
  });
  return { records, rejected, cursors };
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
    const { records, rejected, cursors } = toBatchParts(rows, settings, true);
    const seenMax = cursors.reduce<Cursor>((max, c) => maxCursor(max, c), null);
    const seenMin = cursors.reduce<Cursor>((min, c) => (min === null || compareCursors(c, min) < 0 ? c : min), null);
    const stalled = rows.length >= current && compareCursors(seenMin, seenMax) === 0;
    if (!stalled) return { records, rejected, nextCursor: maxCursor(cursor, seenMax), resumeFrom: seenMax ?? cursor };
    if (current >= cap) {
      throw new ErpError(
        settings.source,
        `more than ${cap} rows share cursor ${String(seenMax)}: raise the source limit or use a finer cursor`,
        { code: 'ERR_ERP_CURSOR', retryable: false },
      );
    }
    current = Math.min(current * 2, cap);
    settings.logger.warn({ source: settings.source, cursor: seenMax, limit: current }, 'full batch without progress: raising the limit for this poll');
  }
}
