/**
 * The calling convention of the SQL client, shared by `sql-client.ts` (which opens a pool) and the
 * driver modules behind it (`pg-client.ts`, `mysql-client.ts`), so that the drivers import only this.
 */
import type { Dialect } from './named-params.js';

export type { Dialect } from './named-params.js';

/** A connection pool to one database. */
export interface SqlClient {
  readonly dialect: Dialect;
  /** Runs one statement with named parameters; statements without rows resolve to []. */
  query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /**
   * `query` with the date and timestamp columns left as the database's text until `revive` parses a row's
   * (as `query` would have): a poll recognises a re-read row by its raw text before paying for that
   * (polling.ts, `KnownRows`). Optional: a driver without it is read with `query`.
   */
  queryDeferred?(sql: string, params?: Record<string, unknown>): Promise<DeferredRows>;
  /** Runs `fn` in a transaction on one connection: committed if it resolves, rolled back if it throws. */
  transaction<R>(fn: (tx: SqlClient) => Promise<R>): Promise<R>;
  /**
   * Streams a query's rows in chunks of `chunkSize` without holding the result in memory
   * (pg: a server-side cursor in a transaction; mysql2: a row stream with back-pressure).
   */
  stream<T = Record<string, unknown>>(sql: string, params: Record<string, unknown>, chunkSize: number): AsyncIterable<T[]>;
  /** Closes the pool. */
  close(): Promise<void>;
}

/** Rows whose date and timestamp columns are still text, and how to parse one row's. */
export interface DeferredRows {
  rows: Record<string, unknown>[];
  /** The row with those columns parsed (a new object when it has any; the row itself otherwise). */
  revive(row: Readonly<Record<string, unknown>>): Record<string, unknown>;
}

/** Options of `openSql`. */
export interface SqlClientOptions {
  /** Most connections in the pool. @defaultValue 4 */
  max?: number;
  /** Names the client in error messages (a source name); defaults to the dialect. */
  name?: string;
  /** Time allowed to open a connection. @defaultValue 10000 */
  connectTimeoutMs?: number;
  /**
   * The zone of timestamps without one (`DATETIME`, `timestamp without time zone`): they are read as that
   * zone's wall clock, and Dates are bound as it, whatever the process's `TZ`. @defaultValue 'UTC'
   */
  timeZone?: string;
}

/** Pool settings `openSql` resolves for the driver modules. */
export interface DriverSettings {
  max: number;
  name: string;
  connectTimeoutMs: number;
  timeZone: string;
}
