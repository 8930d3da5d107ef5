/**
 * When a failed store request is repeated and after how long: which errors are temporary for which
 * methods (a POST only when the store cannot have seen it), capped exponential backoff with full
 * jitter, and the store's own `Retry-After`.
 */
import { type StoreError, StoreNetworkError, StoreRateLimitedError, StoreServerError, StoreTimeoutError } from './errors.js';
import type { HttpMethod } from './request.js';

/** Longest wait a `Retry-After` may impose; a store asking for more is treated as asking for this. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Errors of connections that never carried the request, so even a POST may be repeated. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds, capped; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(0, Math.round(ms)), MAX_RETRY_AFTER_MS);
}

/** Full-jitter backoff: a random wait between 0 and min(max, base·2^(attempt-1)). */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  return Math.round(random() * Math.min(maxMs, baseMs * 2 ** (attempt - 1)));
}

/** The errno or undici code of `error` or of its causes (undici wraps the socket error). */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  // undici wraps the socket error; look one or two levels down for the errno or undici code.
  for (let depth = 0; depth < 3 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

/** True when the request certainly did not reach the store (connection refused, DNS, connect timeout). */
function neverSent(error: StoreError): boolean {
  const code = errorCode(error.cause);
  return code !== undefined && NOT_SENT_CODES.has(code);
}

/** Whether `error` on `method` may be repeated: never for 4xx; POST only when the store cannot have seen it. */
export function isRetryable(error: unknown, method: HttpMethod): boolean {
  if (error instanceof StoreRateLimitedError) return true;
  if (error instanceof StoreNetworkError || error instanceof StoreTimeoutError) return method !== 'POST' || neverSent(error);
  if (error instanceof StoreServerError) return method !== 'POST';
  return false;
}
