/**
 * The PostgreSQL side of `SqlClient`, on a pg Pool. Timestamps are parsed here rather than by pg, which
 * would truncate microseconds and place `timestamp without time zone` in the process's zone.
 */
import pg from 'pg';

import { toPositional } from './named-params.js';
import { sqlError } from './sql-errors.js';
import type { DeferredRows, DriverSettings, SqlClient } from './sql-types.js';
import { naiveToDate, offsetTextToDate, zonedText } from './zoned-time.js';

type Queryable = pg.Pool | pg.PoolClient;

/** Type OIDs of `date`, `timestamp without time zone` and `timestamp with time zone`. */
const DATE_OID = 1082;
const TIMESTAMP_OID = 1114;
const TIMESTAMPTZ_OID = 1184;

const TIME_OIDS: ReadonlySet<number> = new Set([DATE_OID, TIMESTAMP_OID, TIMESTAMPTZ_OID]);

/** A value of one of those types as a Date (undefined: leave it to pg). */
function parseTime(oid: number, text: string, zone: string): Date | undefined {
  if (oid === TIMESTAMP_OID) return naiveToDate(text, zone);
  // A day starts at midnight in the zone, as the bound `:cursor` is written (zoned-time.ts).
  if (oid === DATE_OID) return naiveToDate(`${text} 00:00:00`, zone);
  return offsetTextToDate(text);
}

/** pg's type parsers, except dates and timestamps: naive ones in `zone`, all with their microseconds. */
function typeParsers(zone: string): pg.CustomTypesConfig {
  const getTypeParser = ((oid: number, format?: 'text' | 'binary') => {
    const fallback = format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid);
    if (format === 'binary' || (oid !== DATE_OID && oid !== TIMESTAMP_OID && oid !== TIMESTAMPTZ_OID)) return fallback;
    // `infinity` and BC dates are left to pg.
    return (text: string) => parseTime(oid, text, zone) ?? (fallback as (value: string) => unknown)(text);
  }) as pg.CustomTypesConfig['getTypeParser'];
  return { getTypeParser };
}

/** `parsers` except dates and timestamps, which stay text (parsed later by `parsers`: `queryDeferred`). */
function deferredParsers(parsers: pg.CustomTypesConfig): pg.CustomTypesConfig {
  const getTypeParser = ((oid: number, format?: 'text' | 'binary') =>
    format !== 'binary' && TIME_OIDS.has(oid) ? (text: string) => text : parsers.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'];
  return { getTypeParser };
}

/** Parses the deferred columns of `fields` in a row, as `parsers` would have. */
function reviver(fields: readonly pg.FieldDef[], parsers: pg.CustomTypesConfig): DeferredRows['revive'] {
  const columns = fields
    .filter((field) => TIME_OIDS.has(field.dataTypeID) && field.format !== 'binary')
    .map((field) => ({ name: field.name, parse: parsers.getTypeParser(field.dataTypeID, 'text') as (text: string) => unknown }));
  if (columns.length === 0) return (row) => row as Record<string, unknown>;
  return (row) => {
    const out: Record<string, unknown> = { ...row };
    for (const { name, parse } of columns) {
      const text = out[name];
      if (typeof text === 'string') out[name] = parse(text);
    }
    return out;
  };
}

/** A parameter as pg should get it: a Date as text in the zone with its offset (see zoned-time.ts). */
function bindable(value: unknown, zone: string): unknown {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? zonedText(value, zone) : value;
}

/** Opens a pg pool behind the `SqlClient` interface. */
export function openPostgres(url: string, settings: DriverSettings): SqlClient {
  const parsers = typeParsers(settings.timeZone);
  const deferred = deferredParsers(parsers);
  const pool = new pg.Pool({
    connectionString: url,
    max: settings.max,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    types: parsers,
  });
  // An idle connection that dies emits here; without a listener the process would crash. The next
  // query reports the problem.
  pool.on('error', () => undefined);
  let closed = false;
  const fail = (what: string, error: unknown) => sqlError(settings.name, url, what, error);

  /** The result of one statement (of a script: its last), with `types` instead of the pool's when given. */
  async function execute(on: Queryable, sql: string, params: Record<string, unknown>, types?: pg.CustomTypesConfig): Promise<pg.QueryResult | undefined> {
    let result: pg.QueryResult;
    try {
      const { text, values } = toPositional(sql, params, 'postgres');
      const bound = values.map((value) => bindable(value, settings.timeZone));
      // No values: the simple protocol, which also accepts several statements (schema scripts).
      if (types !== undefined) result = await on.query({ text, ...(bound.length === 0 ? {} : { values: bound }), types });
      else result = values.length === 0 ? await on.query(text) : await on.query(text, bound);
    } catch (error) {
      throw fail('query failed', error);
    }
    // A multi-statement script yields one result per statement; its rows are those of the last.
    return Array.isArray(result) ? (result.at(-1) as pg.QueryResult | undefined) : result;
  }

  async function run<T>(on: Queryable, sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
    return ((await execute(on, sql, params))?.rows ?? []) as T[];
  }

  /** Checked-out clients emit their connection errors on themselves, not on the pool. */
  const ignoreError = (): void => undefined;

  async function connect(): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw fail('cannot connect', error);
    }
    // A database stopped while a transaction or stream holds this client emits 'error' here; unheard, it
    // would crash the process. The statement in progress fails and reports it.
    client.on('error', ignoreError);
    return client;
  }

  /** Returns a client to the pool (destroying it when `broken`), without its error listener. */
  function release(client: pg.PoolClient, broken: boolean): void {
    client.off('error', ignoreError);
    client.release(broken);
  }

  async function* cursorChunks<T>(client: pg.PoolClient, sql: string, params: Record<string, unknown>, size: number) {
    const name = `storesync_stream_${Math.random().toString(36).slice(2, 10)}`;
    await run(client, `DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, params);
    try {
      for (;;) {
        const rows = await run<T>(client, `FETCH ${Math.max(1, Math.trunc(size))} FROM ${name}`);
        if (rows.length > 0) yield rows;
        if (rows.length < size) return;
      }
    } finally {
      await run(client, `CLOSE ${name}`).catch(() => undefined);
    }
  }

  function clientOn(on: Queryable, inTransaction: boolean): SqlClient {
    return {
      dialect: 'postgres',
      query: (sql, params) => run(on, sql, params),
      async queryDeferred(sql, params = {}) {
        const result = await execute(on, sql, params, deferred);
        return { rows: (result?.rows ?? []) as Record<string, unknown>[], revive: reviver(result?.fields ?? [], parsers) };
      },
      async transaction(fn) {
        // Nested calls join the outer transaction: pg has no nested transactions and savepoints are not needed here.
        if (inTransaction) return fn(this);
        const client = await connect();
        try {
          await run(client, 'BEGIN');
          const result = await fn(clientOn(client, true));
          await run(client, 'COMMIT');
          release(client, false);
          return result;
        } catch (error) {
          // A connection that cannot even roll back is broken: destroy it instead of pooling it.
          const rolledBack = await run(client, 'ROLLBACK').then(
            () => true,
            () => false,
          );
          release(client, !rolledBack);
          throw error;
        }
      },
      async *stream<T>(sql: string, params: Record<string, unknown>, chunkSize: number) {
        if (inTransaction) {
          yield* cursorChunks<T>(on as pg.PoolClient, sql, params, chunkSize);
          return;
        }
        // A cursor lives in a transaction; it is rolled back (read-only work) when the reader stops early.
        const client = await connect();
        let done = false;
        try {
          await run(client, 'BEGIN READ ONLY');
          yield* cursorChunks<T>(client, sql, params, chunkSize);
          done = true;
        } finally {
          const ended = await run(client, done ? 'COMMIT' : 'ROLLBACK').then(
            () => true,
            () => false,
          );
          release(client, !ended);
        }
      },
      async close() {
        if (inTransaction || closed) return;
        closed = true;
        await pool.end();
      },
    };
  }

  return clientOn(pool, false);
}
