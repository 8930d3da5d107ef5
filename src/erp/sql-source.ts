/**
 * A SQL source: polls the configured `changes` query on the ERP database (PostgreSQL or MySQL/MariaDB)
 * and optionally streams its `snapshot` query for the reconcile.
 *
 * The `changes` query gets named parameters and must return a `cursor` column:
 *
 *     SELECT "Código" AS code, "Existencia" AS stock, "Modificado" AS cursor
 *     FROM erp."Artículos"
 *     WHERE CAST(:cursor AS timestamp) IS NULL
 *        OR ("Modificado", "Código") > (CAST(:cursor AS timestamp), COALESCE(CAST(:afterKey AS text), ''))
 *     ORDER BY cursor, code
 *     LIMIT :limit
 *
 * `:cursor` is the last cursor (a timestamp moved back by `overlapMs`, bound as the `timeZone`'s wall
 * clock with its microseconds; a number or text otherwise; null on the first poll). `:afterKey` (optional)
 * is null on the first read of a poll, which must keep rows with `cursor >= :cursor`; a read that
 * continues a poll passes the last row's key, and the query must then keep rows with
 * `(cursor, key) > (:cursor, :afterKey)`, so rows sharing one cursor are paged however many there are
 * (polling.ts). A query without `:afterKey` keeps `cursor >= :cursor` and can only get past as many
 * rows under one cursor as `TIE_LIMIT_FACTOR` times its limit. `ORDER BY cursor, code` matters: rows
 * must come in cursor order, with ties in the key's order, or a batch cut at `limit` could skip rows.
 * pg needs a type for a parameter it cannot infer (`CAST(:cursor AS timestamp) IS NULL`); in MySQL and
 * MariaDB `cursor` is a reserved word (`` AS `cursor` ``).
 *
 * Timestamps without a zone are the wall clock of the source's `timeZone` (zoned-time.ts). A poll whose
 * start lies just before a backward DST transition of that zone starts its first read one shift earlier
 * (an hour, once a year): rows written in the repeated hour carry wall times the cursor already passed.
 *
 * The snapshot query needs no parameters and no order; pg reads it through a server-side cursor and
 * mysql2 through a row stream, in chunks of `limit` rows, so 100k rows never sit in memory at once.
 */
import type { SqlSourceConfig } from '../config/schema.js';
import { ConfigError, formatIssue } from '../errors.js';
import { toCursor } from './cursor.js';
import { parameterNames } from './named-params.js';
import { pollChanges, pollSettingsFor, type ReadPage, toBatchParts } from './polling.js';
import { dateOfMicros, epochMicros } from './precise-date.js';
import { snapshotChunk, type SourceDeps } from './source-deps.js';
import { openSql, type SqlClient } from './sql-client.js';
import { sqlTiebreak } from './sql-tiebreak.js';
import type { ChangeSource, Cursor, ReadOptions, SnapshotChunk } from './types.js';
import { backwardShiftNear } from './zoned-time.js';

/** How far ahead of a poll's start a backward DST transition widens it (the largest shift any zone has). */
const TRANSITION_HORIZON_MS = 2 * 3_600_000;

/**
 * How to read from the start, per dialect, shown when a first poll reads nothing (see polling.ts).
 * PostgreSQL cannot type a bare `:cursor IS NULL`, hence the cast.
 */
function firstPollHint(sql: SqlClient): string {
  const idiom =
    sql.dialect === 'postgres'
      ? "`WHERE changed_at >= COALESCE(CAST(:cursor AS timestamp), '-infinity')` or `WHERE (CAST(:cursor AS timestamp) IS NULL OR changed_at >= :cursor)`"
      : "`WHERE (:cursor IS NULL OR changed_at >= :cursor)` or `WHERE changed_at >= COALESCE(:cursor, '1970-01-01')`";
  return (
    'the changes query probably compares with :cursor, which is NULL on the first poll, so `changed_at > :cursor` ' +
    `matches nothing and the cursor never moves: write ${idiom}, or set the source's initialCursor; ` +
    '`storesync sources test` shows what the query reads'
  );
}

/** Connections a source keeps: one poll at a time, plus a snapshot running beside it. */
const POOL_SIZE = 2;

/** Opens a SQL source (its pool connects on first use). */
export function createSqlSource(config: SqlSourceConfig, deps: SourceDeps): ChangeSource {
  const zone = config.timeZone ?? 'UTC';
  const sql: SqlClient = openSql(config.url, { name: config.name, max: POOL_SIZE, timeZone: zone });
  const pagesByKey = config.changes !== undefined && parameterNames(config.changes, sql.dialect).has('afterKey');
  const settings = pollSettingsFor(config, deps, 'row', firstPollHint(sql), sqlTiebreak(config.changes, sql.dialect, pagesByKey, config.mapping));
  const initialCursor = toCursor(config.initialCursor);
  const snapshotQuery = config.snapshot;
  const deletionsQuery = config.deletions;

  /** A first read's start moved back by the zone's backward shift when one is near (see the module comment). */
  function widened(start: Date | number | string | null, page: ReadPage): Date | number | string | null {
    if (page.continues || !(start instanceof Date)) return start;
    const shift = backwardShiftNear(start, zone, TRANSITION_HORIZON_MS);
    return shift === 0 ? start : dateOfMicros(epochMicros(start) - shift * 1000);
  }

  const source: ChangeSource = {
    name: config.name,
    kind: 'sql',
    readChanges(cursor: Cursor, limit: number, options?: ReadOptions) {
      const changes = config.changes;
      // A source polled only by its snapshot diff (config allows it) has no changes to read.
      if (changes === undefined) return Promise.reject(new ConfigError([`source ${config.name}: has no changes query (it is polled by its snapshot diff)`]));
      return pollChanges(
        cursor ?? initialCursor,
        limit,
        settings,
        (start, rows, page) => {
          const params = { cursor: widened(start, page), limit: rows, afterKey: page.afterKey };
          // With rows to recognise, their dates stay text until a row is new (polling.ts, `KnownRows`).
          return options?.known && sql.queryDeferred ? sql.queryDeferred(changes, params) : sql.query(changes, params);
        },
        options,
      );
    },
    close: () => sql.close(),
  };
  if (snapshotQuery !== undefined) {
    source.snapshot = async function* snapshot(): AsyncIterable<SnapshotChunk> {
      for await (const rows of sql.stream(snapshotQuery, {}, config.limit)) {
        const { records, rejected } = toBatchParts(rows, { ...settings, rowNoun: 'snapshot row' }, false);
        for (const bad of rejected) {
          // The ref is a key of the line already: the issues do not repeat it.
          settings.logger.warn({ ref: bad.ref, issues: bad.issues.map((issue) => formatIssue(issue.record === bad.ref ? { ...issue, record: undefined } : issue)) }, 'snapshot row rejected');
        }
        if (records.length + rejected.length > 0) yield snapshotChunk(records, rejected);
      }
    };
  }
  if (deletionsQuery !== undefined) {
    // Paged by key only when the deletions query itself uses :afterKey (the changes query may, and not it).
    // Nothing deleted yet is the normal first poll (ERPNext's empty tabDeleted Document): no first-poll
    // warning, whose advice is about the changes query anyway.
    const deletionSettings = {
      ...settings,
      rowNoun: 'deletion row',
      pagesByKey: parameterNames(deletionsQuery, sql.dialect).has('afterKey'),
      onEmptyFirstPoll: () => undefined,
    };
    source.readDeletions = (cursor: Cursor, limit: number, options?: ReadOptions) =>
      pollChanges(
        cursor ?? initialCursor,
        limit,
        deletionSettings,
        (start, rows, page) => sql.query(deletionsQuery, { cursor: widened(start, page), limit: rows, afterKey: page.afterKey }),
        options,
      );
  }
  return source;
}
