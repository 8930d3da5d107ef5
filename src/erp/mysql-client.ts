/**
 * The MySQL/MariaDB side of `SqlClient`, on a mysql2 pool (callback API, which also streams).
 * `DATETIME` and `TIMESTAMP` are read as text and placed in the client's zone here: mysql2 would truncate
 * microseconds and use the process's zone. (A `TIMESTAMP` is shown in the session's `time_zone`, the
 * server's by default: the zone to configure for such columns.)
 */
import { createPool, type Pool, type PoolConnection } from 'mysql2';

import { toPositional } from './named-params.js';
import { sqlError } from './sql-errors.js';
import { naiveToDate, wallText } from './zoned-time.js';

/** A parameter as mysql2 should get it: a Date as the zone's wall clock, with its microseconds. */
function bindable(value: unknown, zone: string): unknown {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? wallText(value, zone) : value;
}
import type { DriverSettings, SqlClient } from './sql-types.js';

/** The one mysql2 call used, declared narrowly (its overloads do not type a values array well). */
interface Queryable {
  query(sql: string, values: unknown[] | undefined, callback: (error: Error | null, rows: unknown) => void): unknown;
}

/** Opens a mysql2 pool behind the `SqlClient` interface. */
export function openMysql(url: string, settings: DriverSettings): SqlClient {
  const zone = settings.timeZone;
  const pool: Pool = createPool({
    uri: url.replace(/^mariadb:/i, 'mysql:'),
    connectionLimit: settings.max,
    connectTimeout: settings.connectTimeoutMs,
    // DECIMAL stays text (exact); BIGINT becomes a number when it fits, text otherwise; DATETIME,
    // TIMESTAMP and DATE (midnight) Dates in the zone (typeCast).
    decimalNumbers: false,
    supportBigNumbers: true,
    dateStrings: false,
    timezone: 'Z',
    charset: 'utf8mb4',
    typeCast(field, next) {
      if (field.type !== 'DATETIME' && field.type !== 'TIMESTAMP' && field.type !== 'DATE') return next();
      const text = field.string();
      if (text === null) return null;
      // A zero date ('0000-00-00 00:00:00') has no instant.
      return naiveToDate(field.type === 'DATE' ? `${text} 00:00:00` : text, zone) ?? null;
    },
  });
  const fail = (what: string, error: unknown) => sqlError(settings.name, url, what, error);
  let closed = false;

  function run<T>(on: Queryable, sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
    return new Promise((resolve, reject) => {
      let query: { text: string; values: unknown[] };
      try {
        query = toPositional(sql, params, 'mysql');
      } catch (error) {
        reject(fail('query failed', error));
        return;
      }
      const values = query.values.length === 0 ? undefined : query.values.map((value) => bindable(value, zone));
      on.query(query.text, values, (error, rows) => {
        if (error) reject(fail('query failed', error));
        // Statements without rows answer a ResultSetHeader object.
        else resolve(Array.isArray(rows) ? (rows as T[]) : []);
      });
    });
  }

  // A server gone away while a transaction or stream holds a connection emits 'error' on it; unheard,
  // it would crash the process. The statement in progress fails and reports it.
  const guarded = new WeakSet<PoolConnection>();
  const ignoreError = (): void => undefined;

  function connect(): Promise<PoolConnection> {
    return new Promise((resolve, reject) => {
      pool.getConnection((error, connection) => {
        if (error) return reject(fail('cannot connect', error));
        // Pooled connections come back: one listener each, not one per checkout.
        if (!guarded.has(connection)) {
          guarded.add(connection);
          connection.on('error', ignoreError);
        }
        resolve(connection);
      });
    });
  }

  async function* rowChunks<T>(connection: PoolConnection, sql: string, params: Record<string, unknown>, size: number) {
    let query: { text: string; values: unknown[] };
    try {
      query = toPositional(sql, params, 'mysql');
    } catch (error) {
      throw fail('query failed', error);
    }
    const values = query.values.map((value) => bindable(value, zone));
    const rows = connection.query(query.text, values).stream({ highWaterMark: size });
    let chunk: T[] = [];
    try {
      for await (const row of rows) {
        chunk.push(row as T);
        if (chunk.length >= size) {
          yield chunk;
          chunk = [];
        }
      }
    } catch (error) {
      throw fail('query failed', error);
    }
    if (chunk.length > 0) yield chunk;
  }

  function clientOn(on: Pool | PoolConnection, inTransaction: boolean): SqlClient {
    return {
      dialect: 'mysql',
      query: (sql, params) => run(on as unknown as Queryable, sql, params),
      async transaction(fn) {
        // Nested calls join the outer transaction (no savepoints needed here).
        if (inTransaction) return fn(this);
        const connection = await connect();
        try {
          await run(connection as unknown as Queryable, 'START TRANSACTION');
          const result = await fn(clientOn(connection, true));
          await run(connection as unknown as Queryable, 'COMMIT');
          connection.release();
          return result;
        } catch (error) {
          const rolledBack = await run(connection as unknown as Queryable, 'ROLLBACK').then(
            () => true,
            () => false,
          );
          // A connection that cannot even roll back is broken: destroy it instead of pooling it.
          if (rolledBack) connection.release();
          else connection.destroy();
          throw error;
        }
      },
      async *stream<T>(sql: string, params: Record<string, unknown>, chunkSize: number) {
        if (inTransaction) {
          yield* rowChunks<T>(on as PoolConnection, sql, params, chunkSize);
          return;
        }
        const connection = await connect();
        let done = false;
        try {
          yield* rowChunks<T>(connection, sql, params, chunkSize);
          done = true;
        } finally {
          // A reader that stopped early leaves rows in flight on the connection: it cannot be reused.
          if (done) connection.release();
          else connection.destroy();
        }
      },
      async close() {
        if (inTransaction || closed) return;
        closed = true;
        await new Promise<void>((resolve) => pool.end(() => resolve()));
      },
    };
  }

  return clientOn(pool, false);
}
