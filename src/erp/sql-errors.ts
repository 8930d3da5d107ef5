/**
 * Driver errors turned into `ErpError`s that say what failed (`ERR_ERP_CONNECTION`, `ERR_ERP_SCHEMA`,
 * `ERR_ERP_QUERY`) and whether trying again can help, and never carry the database password.
 * Classification goes by error code (SQLSTATE, mysql2 codes, Node system codes).
 */
import { ErpError, type ErpErrorCode } from '../errors.js';
import { redactText, registerSecret } from '../secrets.js';

/** Node system errors of a connection that may work next time. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/** mysql2 codes of temporary conditions: lost connections, too many connections, lock conflicts. */
const MYSQL_TEMPORARY = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'ER_QUERY_INTERRUPTED',
]);

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** mysql2 codes of a missing database, table or column. */
const MYSQL_SCHEMA = new Set(['ER_NO_SUCH_TABLE', 'ER_BAD_FIELD_ERROR', 'ER_BAD_DB_ERROR', 'ER_BAD_TABLE_ERROR']);

/** SQLSTATEs of a missing table, column, schema or database (PostgreSQL: 42P01, 42703, 3F000, 3D000). */
const PG_SCHEMA = new Set(['42P01', '42703', '3F000', '3D000']);

/** mysql2 codes of temporary conditions that are not the connection's: lock conflicts, an interrupted query. */
const MYSQL_BUSY = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'ER_QUERY_INTERRUPTED']);

/**
 * The code of a driver error: a lost or refused connection, a missing table or column, or another
 * statement failure (an `ErpError` keeps its own).
 */
export function sqlErrorCode(error: unknown): ErpErrorCode {
  if (error instanceof ErpError) return error.code;
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && (MYSQL_SCHEMA.has(code) || PG_SCHEMA.has(code))) return 'ERR_ERP_SCHEMA';
  if (!isTemporarySqlError(error)) return 'ERR_ERP_QUERY';
  // Temporary, but the connection is fine: deadlocks, serialization failures, lock waits.
  if (typeof code === 'string' && (MYSQL_BUSY.has(code) || ['40001', '40P01', '55P03'].includes(code))) return 'ERR_ERP_QUERY';
  return 'ERR_ERP_CONNECTION';
}

/**
 * True when the same statement may succeed later. pg: SQLSTATE classes 08 (connection), 53 (resources),
 * 57P (shutdown), 40001/40P01 (serialization, deadlock), 55P03 (lock); driver errors without a
 * SQLSTATE are connection failures. mysql2: the codes above and other `fatal` (connection-level) errors.
 */
export function isTemporarySqlError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, fatal } = error as { code?: unknown; fatal?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || MYSQL_TEMPORARY.has(code)) return true;
    // Other server errors (syntax, unknown table, access denied) stay until someone fixes them.
    if (code.startsWith('ER_')) return false;
    if (SQLSTATE.test(code)) return /^(08|53|57P)/.test(code) || ['40001', '40P01', '55P03'].includes(code);
  }
  if (fatal === true) return true;
  // pg reports dropped and timed-out connections as plain Errors without a code.
  return error.constructor === Error && code === undefined;
}

/** Registers the URL's password (raw and decoded) as a secret. */
export function registerUrlSecret(url: string): void {
  try {
    const password = new URL(url).password;
    registerSecret(password);
    registerSecret(decodeURIComponent(password));
  } catch {
    // An unparsable URL has no password we could find; the driver will report it.
  }
}

/** Wraps a driver error: `<source>: <what> on <url>: <driver message>`, the URL's password and every known secret removed. */
export function sqlError(source: string, url: string, what: string, error: unknown): ErpError {
  if (error instanceof ErpError) return error;
  const message = error instanceof Error ? error.message || (error as { code?: string }).code || error.name : String(error);
  return new ErpError(source, redactText(`${what} on ${url}: ${message}`), {
    code: sqlErrorCode(error),
    cause: error,
    retryable: isTemporarySqlError(error),
  });
}
