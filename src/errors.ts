/**
 * One error base with a stable string `code`. Code branches on `code` or class, never on message text.
 * The class decides what happens next: `retryable` errors are retried with backoff, the others become
 * permanent failures that stay visible with their reason.
 */

/** Stable codes, one per kind of failure. */
export type ErrorCode =
  | 'ERR_CONFIG'
  | 'ERR_VALIDATION'
  | 'ERR_STORE_AUTH'
  | 'ERR_STORE_NOT_FOUND'
  | 'ERR_STORE_CONFLICT'
  | 'ERR_STORE_BAD_REQUEST'
  | 'ERR_STORE_RATE_LIMITED'
  | 'ERR_STORE_SERVER'
  | 'ERR_STORE_REJECTED'
  | 'ERR_STORE_BAD_RESPONSE'
  | 'ERR_STORE_NETWORK'
  | 'ERR_STORE_TIMEOUT'
  | 'ERR_TIMEOUT'
  | ErpErrorCode
  | 'ERR_ERP_RECORD'
  | 'ERR_REDIS';

/**
 * What went wrong in an ERP connector, one code each:
 * - `ERR_ERP_CONNECTION`: the database, HTTP endpoint or file system cannot be reached (retryable);
 * - `ERR_ERP_SCHEMA`: a table, column, schema or database the query or sink needs is missing (fix, then migrate);
 * - `ERR_ERP_QUERY`: any other statement failure (syntax, permissions; deadlocks and lock waits are retryable);
 * - `ERR_ERP_CURSOR`: the source's cursor cannot advance (no cursor column, more rows on one cursor than the cap);
 * - `ERR_ERP_FILE`: a CSV or sales file cannot be read, moved or written, or is not valid CSV;
 * - `ERR_ERP_HTTP`: an HTTP source or sink answered an error status or a body that is not what was expected.
 */
export type ErpErrorCode = 'ERR_ERP_CONNECTION' | 'ERR_ERP_SCHEMA' | 'ERR_ERP_QUERY' | 'ERR_ERP_CURSOR' | 'ERR_ERP_FILE' | 'ERR_ERP_HTTP';

/** Base of every storesync error. */
export class StoreSyncError extends Error {
  readonly code: ErrorCode;
  /** True when trying the same thing again later may succeed. */
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options?.retryable ?? false;
  }
}

/**
 * `error` with `what` in front of its message. A StoreSyncError comes back as a copy of the same class
 * with the same fields (code, retryable, status...), so code that branches on the class or the code
 * still works, and the original as its `cause`; other errors come back unchanged.
 */
export function withContext(error: unknown, what: string): Error {
  if (!(error instanceof StoreSyncError)) return error instanceof Error ? error : new Error(String(error));
  const copy = Object.assign(Object.create(Object.getPrototypeOf(error) as object) as StoreSyncError, error);
  const message = `${what}: ${error.message}`;
  const frames = error.stack?.split('\n').slice(1).join('\n');
  for (const [key, value] of Object.entries({ message, cause: error, stack: `${error.name}: ${message}${frames ? `\n${frames}` : ''}` })) {
    Object.defineProperty(copy, key, { value, writable: true, configurable: true, enumerable: false });
  }
  return copy;
}

/** One broken rule: which record, which field, what value, which rule. */
export interface ValidationIssue {
  /** The record the value belongs to: a SKU, a sale id, a file row, a config key. */
  record?: string;
  field: string;
  value: unknown;
  rule: string;
}

/** Formats a value for an error message: short, JSON-ish, never multi-line. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The value at `path` inside `input` (undefined where the path leaves the structure), to name it in an issue. */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** Renders an issue as one line: `SKU A-1: field Stock = -3 breaks "integer 0 to 999999"`. */
export function formatIssue(issue: ValidationIssue): string {
  const where = issue.record === undefined ? '' : `${issue.record}: `;
  return `${where}field ${issue.field} = ${describeValue(issue.value)} breaks "${issue.rule}"`;
}

/** Input that breaks a rule; nothing was sent or applied. */
export class ValidationError extends StoreSyncError {
  readonly issues: readonly ValidationIssue[];
  /** Raised by a command that never sends anything (`sources test`): the CLI then does not say "nothing sent". */
  readonly readOnly: boolean;

  constructor(issues: readonly ValidationIssue[], context?: string, options: { readOnly?: boolean } = {}) {
    const lines = issues.map(formatIssue);
    super('ERR_VALIDATION', `${context ? `${context}: ` : ''}${lines.join('; ')}`);
    this.issues = issues;
    this.readOnly = options.readOnly ?? false;
  }
}

/** A configuration problem; the process exits with code 78 (EX_CONFIG). */
export class ConfigError extends StoreSyncError {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super('ERR_CONFIG', problems.join('\n'));
    this.problems = problems;
  }
}

/** An ERP connector failed; `code` says how (see `ErpErrorCode`). Temporary unless said otherwise. */
export class ErpError extends StoreSyncError {
  declare readonly code: ErpErrorCode;
  readonly source: string;

  constructor(source: string, message: string, options: { code: ErpErrorCode; cause?: unknown; retryable?: boolean }) {
    super(options.code, `${source}: ${message}`, { cause: options.cause, retryable: options.retryable ?? true });
    this.source = source;
  }
}
