import { type ErrorCode, StoreSyncError } from '../errors.js';
import { redactText } from '../secrets.js';

/** What every store error carries: where it happened and what the store said (redacted, cut short). */
export interface StoreErrorDetails {
  /** The path template, such as `PUT /Api/Inventory` (never the hash or query string). */
  endpoint: string;
  status?: number;
  /** The first few hundred characters of the response body, secrets removed. */
  bodyExcerpt?: string;
  cause?: unknown;
}

const EXCERPT_LENGTH = 300;

/** Cuts a response body for an error message and removes secrets from it. */
export function bodyExcerpt(body: string): string {
  const clean = redactText(body).replace(/\s+/g, ' ').trim();
  return clean.length > EXCERPT_LENGTH ? `${clean.slice(0, EXCERPT_LENGTH)}...` : clean;
}

/** Base of the errors of a call to the store API. */
export class StoreError extends StoreSyncError {
  readonly endpoint: string;
  readonly status: number | undefined;
  readonly bodyExcerpt: string | undefined;

  constructor(code: ErrorCode, summary: string, details: StoreErrorDetails, retryable: boolean) {
    const status = details.status === undefined ? '' : ` (HTTP ${details.status})`;
    const body = details.bodyExcerpt ? `: ${details.bodyExcerpt}` : '';
    super(code, redactText(`${details.endpoint}${status}: ${summary}${body}`), {
      cause: details.cause,
      retryable,
    });
    this.endpoint = details.endpoint;
    this.status = details.status;
    this.bodyExcerpt = details.bodyExcerpt;
  }
}

/** Login refused, or a 401 that persisted after one re-authentication. */
export class StoreAuthError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_AUTH', summary, details, false);
  }
}

/**
 * The store refused the credentials (a 401 or a status other than 0 from the login), or a call met the
 * pause that follows: no login is tried before `retryAfterMs` has passed, so store traffic waits instead
 * of hammering the login. A worker holds its job for that long rather than spending an attempt.
 */
export class StoreLoginRefusedError extends StoreAuthError {
  /** Time until the next login may be tried. */
  readonly retryAfterMs: number;

  constructor(summary: string, details: StoreErrorDetails, retryAfterMs: number) {
    super(summary, details);
    this.retryAfterMs = retryAfterMs;
  }
}

/** 404: the product, sale, user or client does not exist on the store. */
export class StoreNotFoundError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_NOT_FOUND', summary, details, false);
  }
}

/** 409: duplicate e-mail, existing user name. */
export class StoreConflictError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_CONFLICT', summary, details, false);
  }
}

/** 400 and other 4xx: the store refused the request as invalid. */
export class StoreBadRequestError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_BAD_REQUEST', summary, details, false);
  }
}

/** 429: slow down; `retryAfterMs` is what the store asked for (or the client's default). */
export class StoreRateLimitedError extends StoreError {
  readonly retryAfterMs: number;

  constructor(summary: string, details: StoreErrorDetails, retryAfterMs: number) {
    super('ERR_STORE_RATE_LIMITED', summary, details, true);
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * No login was sent: the logins of every process sharing the Redis prefix used up `store.maxLoginsPerMinute`
 * (most likely refused ones); the next may be tried after `retryAfterMs`. A worker holds its job for that
 * long rather than spending an attempt, as after a 429.
 */
export class StoreLoginDeferredError extends StoreRateLimitedError {}

/** 5xx. */
export class StoreServerError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_SERVER', summary, details, true);
  }
}

/** HTTP 200 with `{Success: false}` (or an auth `status` other than 0): the store said no. */
export class StoreRejectedError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_REJECTED', summary, details, false);
  }
}

/** A 2xx response whose body is not what the spec describes (HTML page, truncated JSON). */
export class StoreBadResponseError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_BAD_RESPONSE', summary, details, true);
  }
}

/** Connection refused, reset, DNS failure. */
export class StoreNetworkError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_NETWORK', summary, details, true);
  }
}

/** No answer within the configured timeout. */
export class StoreTimeoutError extends StoreError {
  constructor(summary: string, details: StoreErrorDetails) {
    super('ERR_STORE_TIMEOUT', summary, details, true);
  }
}
