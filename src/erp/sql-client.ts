/**
 * A small SQL client over pg and mysql2 with one calling convention: named parameters (`:cursor`),
 * rows as plain objects, transactions, streamed reads, and errors as `ErpError` without the password.
 * Drivers keep their type conversions (pg `numeric` and mysql `DECIMAL` arrive as strings;
 * `normalizeRecord` coerces them) except for timestamps: they arrive as Dates with their microseconds
 * (`PreciseDate`), those without a zone placed in the client's `timeZone`, not the process's
 * (zoned-time.ts); Date parameters are bound as that zone's wall clock.
 *
 * Each driver is imported when its first pool is used, so a daemon loads only the drivers its
 * configuration names (mysql2 and pg cost a few MB of heap each).
 */
import { isTimeZone } from '../time-zone.js';
import { registerUrlSecret, sqlError } from './sql-errors.js';
import type { Dialect, DriverSettings, SqlClient, SqlClientOptions } from './sql-types.js';

export type { Dialect, DriverSettings, SqlClient, SqlClientOptions } from './sql-types.js';

/** Opens a pool for a `postgres://`/`postgresql://` (pg) or `mysql://`/`mariadb://` (mysql2) URL; connects lazily. */
export function openSql(url: string, options: SqlClientOptions = {}): SqlClient {
  registerUrlSecret(url);
  if (options.timeZone !== undefined && !isTimeZone(options.timeZone)) throw new Error(`openSql: unknown time zone "${options.timeZone}"`);
  const settings = { max: options.max ?? 4, connectTimeoutMs: options.connectTimeoutMs ?? 10_000, timeZone: options.timeZone ?? 'UTC' };
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const driver = { ...settings, name: options.name ?? 'postgres' };
    return onFirstUse('postgres', url, driver, async () => (await import('./pg-client.js')).openPostgres(url, driver));
  }
  if (/^(mysql|mariadb):\/\//i.test(url)) {
    const driver = { ...settings, name: options.name ?? 'mysql' };
    return onFirstUse('mysql', url, driver, async () => (await import('./mysql-client.js')).openMysql(url, driver));
  }
  throw new Error('openSql: expected a postgres://, mysql:// or mariadb:// URL');
}

/** A client that imports its driver and opens the pool on its first statement. */
function onFirstUse(dialect: Dialect, url: string, settings: DriverSettings, open: () => Promise<SqlClient>): SqlClient {
  let opened: Promise<SqlClient> | undefined;
  let closed = false;
  const pool = (): Promise<SqlClient> => {
    if (closed && !opened) return Promise.reject(sqlError(settings.name, url, 'query failed', new Error('the pool is closed')));
    return (opened ??= open());
  };
  return {
    dialect,
    query: async (sql, params) => (await pool()).query(sql, params),
    async queryDeferred(sql, params) {
      const client = await pool();
      // A driver that parses its dates itself (mysql2): the rows as read, nothing left to parse.
      return client.queryDeferred ? client.queryDeferred(sql, params) : { rows: await client.query(sql, params), revive: (row) => row };
    },
    transaction: async (fn) => (await pool()).transaction(fn),
    async *stream(sql, params, chunkSize) {
      yield* (await pool()).stream(sql, params, chunkSize);
    },
    async close() {
      if (closed) return;
      closed = true;
      // A pool never opened has nothing to close (and its driver is never imported).
      if (opened) await (await opened).close();
    },
  };
}
