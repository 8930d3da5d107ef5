/**
 * What the store's answers mean: a status, a body and `Retry-After` become the parsed body or the typed
 * error (src/store/errors.ts) that decides the retry; a failure of the connection becomes a network or
 * timeout error; `readAs` checks a body's shape.
 */
import type { z } from 'zod';

import type { StoreConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import {
  bodyExcerpt,
  StoreAuthError,
  StoreBadRequestError,
  StoreBadResponseError,
  StoreConflictError,
  StoreError,
  StoreNetworkError,
  StoreNotFoundError,
  StoreRateLimitedError,
  StoreRejectedError,
  StoreServerError,
  StoreTimeoutError,
} from './errors.js';
import type { HttpMethod } from './request.js';
import { backoffMs, errorCode, parseRetryAfter } from './retry-policy.js';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function messageOf(json: unknown): string | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const record = json as Record<string, unknown>;
  const message = record.Message ?? record.message;
  return typeof message === 'string' && message.trim() !== '' ? message : undefined;
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Reads a response body with a schema; a body of another shape is a StoreBadResponseError naming the
 * first mismatching fields (never the body's secrets).
 */
export function readAs<S extends z.ZodType>(schema: S, body: unknown, method: HttpMethod, endpoint: string): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
  throw new StoreBadResponseError(`unexpected response shape (${where})`, { endpoint: `${method} ${endpoint}` });
}

/** One answer of the store, as `interpretResponse` reads it. */
export interface StoreAnswer {
  method: HttpMethod;
  /** `METHOD /template`. */
  endpoint: string;
  status: number;
  retryAfter: string | string[] | undefined;
  text: string;
  /** The attempt it answered (the backoff of a 429 without `Retry-After` grows with it). */
  attempt: number;
}

/** What reading an answer needs besides the answer. */
export interface AnswerContext {
  retry: StoreConfig['retry'];
  now: () => number;
  logger: Logger;
}

/**
 * The parsed JSON body of a 2xx answer: null when it is empty, and null for a write (PUT, POST, DELETE)
 * whose body is not JSON (`OK`, an HTML page), which is a success; every other answer becomes the
 * StoreError of its status (or of `Success: false`).
 */
export function interpretResponse(answer: StoreAnswer, context: AnswerContext): unknown {
  const { method, endpoint, status, retryAfter, text, attempt } = answer;
  const ok = status >= 200 && status < 300;
  if (ok && text.trim() === '') return null;
  const json = tryJson(text);
  // Built only for an error: redacting every successful answer's body would cost each request.
  const details = () => ({ endpoint, status, bodyExcerpt: bodyExcerpt(text) });
  if (ok) {
    if (!json.ok) {
      // A write the store took and answered with `OK` or an HTML page is done: reporting it as a
      // (retryable) bad response would send it again, and a repeated POST creates twice.
      if (method !== 'GET') {
        context.logger.debug({ endpoint, status, body: bodyExcerpt(text) }, 'store answered a write with a body that is not JSON; taken as success');
        return null;
      }
      throw new StoreBadResponseError('response is not JSON', details());
    }
    const value = json.value;
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && (value as Record<string, unknown>).Success === false) {
      throw new StoreRejectedError(messageOf(value) ?? 'the store answered Success: false', details());
    }
    return value;
  }
  const said = (json.ok ? messageOf(json.value) : undefined) ?? `HTTP ${status}`;
  if (status === 401) throw new StoreAuthError(`hash or credentials refused (${said})`, details());
  if (status === 404) throw new StoreNotFoundError(said, details());
  if (status === 409) throw new StoreConflictError(said, details());
  if (status === 429) {
    const { baseDelayMs, maxDelayMs } = context.retry;
    const wait = parseRetryAfter(retryAfter, context.now()) ?? backoffMs(attempt, baseDelayMs, maxDelayMs);
    throw new StoreRateLimitedError(`rate limited (${said})`, details(), wait);
  }
  if (status >= 500) throw new StoreServerError(said, details());
  if (status >= 400) throw new StoreBadRequestError(said, details());
  throw new StoreBadResponseError(`unexpected HTTP status ${status}`, details());
}

/** A failure of undici (or of the exchange) as a StoreError: a timeout or a network error. */
export function asStoreError(error: unknown, endpoint: string): StoreError {
  if (error instanceof StoreError) return error;
  const code = errorCode(error);
  const name = error instanceof Error ? error.name : '';
  // The deadline of the whole exchange is told apart by the caller (`ExchangeDeadline.passed`).
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new StoreTimeoutError(`no answer within the timeout (${code ?? name})`, { endpoint, cause: error });
  }
  return new StoreNetworkError(`request failed (${code ?? (name || 'network error')})`, { endpoint, cause: error });
}
