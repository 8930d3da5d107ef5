/**
 * A SQL source: polls the configured `changes` query on the ERP database (PostgreSQL or MySQL/MariaDB)
 * and optionally streams its `snapshot` query for the reconcile.
 *
 * The `changes` query gets two named parameters and must return a `cursor` column:
 *
 *     SELECT "Código" AS code, "Existencia" AS stock, "Modificado" AS cursor
 *     FROM erp."Artículos"
 *     WHERE :cursor IS NULL OR "Modificado" >= :cursor
 *     ORDER BY cursor, code
 *     LIMIT :limit
 *
 * `:cursor` is the last cursor (a timestamp moved back by `overlapMs`, bound as a Date; a number or
 * text otherwise; null on the first poll) and the query must keep rows with `cursor >= :cursor`.
 * `ORDER BY cursor, code` matters: rows must come in cursor order, with ties in a stable order, or a
 * batch cut at `limit` could skip rows. pg needs a type for a parameter it cannot infer
 * (`CAST(:cursor AS timestamp) IS NULL`); in MySQL and MariaDB `cursor` is a reserved word (`` AS `cursor` ``).
 *
 * The snapshot query needs no parameters and no order; pg reads it through a server-side cursor and
 * mysql2 through a row stream, in chunks of `limit` rows, so 100k rows never sit in memory at once.
 */
import type { SqlSourceConfig } from '../config/schema.js';
import { ConfigError, formatIssue } from '../errors.js';
import { toCursor } from './cursor.js';
import { pollChanges, pollSettingsFor, toBatchParts } from './polling.js';
import type { SourceDeps } from './source-deps.js';
import { openSql, type SqlClient } from './sql-client.js';
import type { ChangeSource, Cursor, ReadOptions, SnapshotOptions, SourceRecord } from './types.js';

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
  const sql: SqlClient = openSql(config.url, { name: config.name, max: POOL_SIZE });
  const settings = pollSettingsFor(config, deps, 'row', firstPollHint(sql));
  const initialCursor = toCursor(config.initialCursor);
  const snapshotQuery = config.snapshot;
  const deletionsQuery = config.deletions;

  const source: ChangeSource = {
    name: config.name,
    kind: 'sql',
    readChanges(cursor: Cursor, limit: number, options?: ReadOptions) {
      const changes = config.changes;
      // A source polled only by its snapshot diff (config allows it) has no changes to read.
      if (changes === undefined) return Promise.reject(new ConfigError([`source ${config.name}: has no changes query (it is polled by its snapshot diff)`]));
      return pollChanges(cursor ?? initialCursor, limit, settings, (start, rows) => sql.query(changes, { cursor: start, limit: rows }), options);
    },
    close: () => sql.close(),
  };
  if (snapshotQuery !== undefined) {
    source.snapshot = async function* snapshot(options?: SnapshotOptions): AsyncIterable<SourceRecord[]> {
      for await (const rows of sql.stream(snapshotQuery, {}, config.limit)) {
        const { records, rejected } = toBatchParts(rows, { ...settings, rowNoun: 'snapshot row' }, false);
        for (const bad of rejected) {
          settings.logger.warn({ ref: bad.ref, issues: bad.issues.map(formatIssue) }, 'snapshot row rejected');
          options?.onRejected?.(bad);
        }
        if (records.length > 0) yield records;
      }
    };
  }
  if (deletionsQuery !== undefined) {
    const deletionSettings = { ...settings, rowNoun: 'deletion row' };
    source.readDeletions = (cursor: Cursor, limit: number, options?: ReadOptions) =>
      pollChanges(cursor ?? initialCursor, limit, deletionSettings, (start, rows) => sql.query(deletionsQuery, { cursor: start, limit: rows }), options);
  }
  return source;
}
