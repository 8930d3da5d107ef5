/**
 * HTTP to the store: one undici keep-alive pool, one place where responses become typed errors, retries
 * with capped exponential backoff and full jitter, metrics and events. URLs carry the hash in the query
 * string, so nothing here ever puts a URL in a message: errors, logs and metric labels use the endpoint
 * template (`PUT /Api/Inventory`, `/Api/Sale/{id}`).
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

import { type Dispatcher, Pool } from 'undici';
import type { z } from 'zod';

import type { StoreConfig } from '../config/schema.js';
import type { TypedEmitter } from '../events.js';
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
import { JsonArrayReader } from './json-array.js';
import type { StoreMetrics } from './metrics.js';
import type { RequestLimiter, RequestPermit } from './request-limiter.js';

/** HTTP methods the store API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A query parameter value; undefined and null are left out, arrays are sent comma-separated. */
export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number>;

/** One call to the store, described without its URL. */
export interface StoreRequest {
  method: HttpMethod;
  /** Path template, e.g. `/Api/Sale/{id}`: the label of errors, logs and metrics. */
  endpoint: string;
  /** Values of the template's `{placeholders}`, URL-encoded into the path. */
  params?: Readonly<Record<string, string | number>>;
  query?: Readonly<Record<string, QueryValue>>;
  /** Sent as UTF-8 JSON. */
  body?: unknown;
}

/** Per-call options. */
export interface CallOptions {
  /**
   * Attempts inside the client, the first included (default `store.retry.attempts`). `1` disables the
   * client's retries so that a BullMQ worker can retry with its own backoff instead.
   */
  attempts?: number;
}

/** Events of the store client; metrics, logs and tests subscribe. */
export type StoreEvents = {
  'store:request': { endpoint: string; method: HttpMethod; status: number | 'error'; durationMs: number; attempt: number };
  'store:retry': { endpoint: string; method: HttpMethod; attempt: number; delayMs: number; code: string };
  'store:auth': { outcome: 'success' | 'failure'; durationMs: number };
};

/** Called with each element of a JSON array body as soon as it is parsed (`index` from 0). */
export type ElementVisitor = (element: unknown, index: number) => void;

/** Options of a streamed read. */
export interface StreamOptions extends CallOptions {
  /**
   * Awaited once the store answered 2xx, before any of the body is read: a caller that is not ready for
   * the elements yet (the reconcile, still reading the ERP) lets the store prepare its answer meanwhile.
   * The unread body waits in the socket (the store is held back, not our memory), and undici's body
   * timeout does not run while the body is paused. An error of it ends the request and passes through.
   */
  beforeBody?: () => Promise<void>;
}

/** What a resource module needs: an authenticated request and the store's settings. */
export interface StoreApi {
  request(request: StoreRequest, options?: CallOptions): Promise<unknown>;
  /**
   * Like `request`, but a JSON array body is parsed as it arrives and handed over element by element
   * (never held whole, as text or parsed); returns undefined then, and any other body as `request`
   * would. Retried only until the first element was handed over.
   */
  streamArray(request: StoreRequest, visit: ElementVisitor, options?: StreamOptions): Promise<unknown>;
  readonly config: StoreConfig;
  readonly logger: Logger;
  /** Where the resource modules record what they count (paging stopped early); none: not recorded. */
  readonly metrics: StoreMetrics | undefined;
}

/** Longest wait a `Retry-After` may impose; a store asking for more is treated as asking for this. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Errors of connections that never carried the request, so even a POST may be repeated. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

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

function errorCode(error: unknown): string | undefined {
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
function isRetryable(error: unknown, method: HttpMethod): boolean {
  if (error instanceof StoreRateLimitedError) return true;
  if (error instanceof StoreNetworkError || error instanceof StoreTimeoutError) return method !== 'POST' || neverSent(error);
  if (error instanceof StoreServerError) return method !== 'POST';
  return false;
}

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

/** Options of the transport. */
export interface TransportOptions {
  config: StoreConfig;
  logger: Logger;
  events: TypedEmitter<StoreEvents>;
  metrics?: StoreMetrics;
  now: () => number;
  /** Waits between attempts; tests pass a recorder instead of sleeping. */
  sleep?: (ms: number) => Promise<void>;
  /** The store-wide request budget (`store.rateLimit`), consulted before every request; none: unlimited. */
  limiter?: RequestLimiter;
}

/**
 * The HTTP layer: sends one request with retries and returns the parsed JSON body: null when it is empty,
 * and null for a write (PUT, POST, DELETE) whose 2xx body is not JSON (`OK`, an HTML page), which is a
 * success; only a read that must return data fails on a body that is not JSON.
 */
export class Transport {
  readonly #config: StoreConfig;
  readonly #logger: Logger;
  readonly #events: TypedEmitter<StoreEvents>;
  readonly #metrics: StoreMetrics | undefined;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #limiter: RequestLimiter | undefined;
  readonly #pool: Pool;
  readonly #basePath: string;

  constructor(options: TransportOptions) {
    this.#config = options.config;
    this.#logger = options.logger;
    this.#events = options.events;
    this.#metrics = options.metrics;
    this.#now = options.now;
    this.#sleep = options.sleep ?? ((ms) => delay(ms));
    this.#limiter = options.limiter;
    const base = new URL(options.config.baseUrl);
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#pool = new Pool(base.origin, {
      connections: options.config.connections,
      connectTimeout: options.config.connectTimeoutMs,
      headersTimeout: options.config.requestTimeoutMs,
      bodyTimeout: options.config.requestTimeoutMs,
      keepAliveTimeout: 30_000,
    });
  }

  /** Sends `request`, retrying temporary failures, and returns the parsed JSON body. */
  async request(request: StoreRequest, options: CallOptions = {}): Promise<unknown> {
    return this.#retrying(request, options, (attempt) =>
      this.#exchange(request, attempt, { whole: true }, async (endpoint, response) =>
        this.#interpret(request.method, endpoint, response.statusCode, response.headers['retry-after'], await response.body.text(), attempt),
      ),
    );
  }

  /** See `StoreApi.streamArray`. */
  async streamArray(request: StoreRequest, visit: ElementVisitor, options: StreamOptions = {}): Promise<unknown> {
    let visited = false;
    const counting: ElementVisitor = (element, index) => {
      visited = true;
      visit(element, index);
    };
    // The caller's own failure while the body waits (see `beforeBody`): neither a store error nor retried.
    let held: { error: unknown } | undefined;
    try {
      return await this.#retrying(
        request,
        options,
        (attempt) =>
          // No limit on the whole exchange: a large body keeps flowing for as long as it takes; the pool's
          // headers and body timeouts (requestTimeoutMs each) still end a store that stops answering.
          this.#exchange(request, attempt, { whole: false }, async (endpoint, response) => {
            if (response.statusCode < 200 || response.statusCode >= 300) {
              return this.#interpret(request.method, endpoint, response.statusCode, response.headers['retry-after'], await response.body.text(), attempt);
            }
            if (options.beforeBody) {
              try {
                await options.beforeBody();
              } catch (error) {
                held = { error };
                await response.body.dump({ limit: 0 }).catch(() => {});
                throw error;
              }
            }
            const other = await parseArrayBody(response.body, counting, endpoint);
            return other === undefined ? undefined : this.#interpret(request.method, endpoint, response.statusCode, undefined, other, attempt);
          }),
        // Elements already handed over cannot be taken back: a failure past them is not repeated.
        () => !visited && held === undefined,
      );
    } catch (error) {
      if (held) throw held.error;
      throw error;
    }
  }

  async #retrying<T>(request: StoreRequest, options: CallOptions, once: (attempt: number) => Promise<T>, repeatable: () => boolean = () => true): Promise<T> {
    const attempts = Math.max(1, Math.floor(options.attempts ?? this.#config.retry.attempts));
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await once(attempt);
      } catch (error) {
        if (attempt >= attempts || !isRetryable(error, request.method) || !repeatable()) throw error;
        const { baseDelayMs, maxDelayMs } = this.#config.retry;
        const wait =
          error instanceof StoreRateLimitedError ? error.retryAfterMs : backoffMs(attempt, baseDelayMs, maxDelayMs);
        const code = (error as StoreError).code;
        this.#events.emit('store:retry', { endpoint: request.endpoint, method: request.method, attempt, delayMs: wait, code });
        this.#logger.warn(
          { endpoint: request.endpoint, method: request.method, attempt, delayMs: wait, code, err: (error as Error).message },
          'store request failed; retrying',
        );
        await this.#sleep(wait);
      }
    }
  }

  /** Closes the pool's connections, letting requests in flight finish. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  #path(request: StoreRequest): string {
    const path = request.endpoint.replace(/\{(\w+)\}/g, (_match, name: string) => {
      const value = request.params?.[name];
      if (value === undefined) throw new Error(`store request ${request.endpoint}: path parameter ${name} missing`);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value === undefined || value === null) continue;
      query.append(key, Array.isArray(value) ? value.join(',') : String(value));
    }
    const search = query.toString();
    return `${this.#basePath}${path}${search ? `?${search}` : ''}`;
  }

  async #exchange<T>(
    request: StoreRequest,
    attempt: number,
    timeout: { whole: boolean },
    read: (endpoint: string, response: Dispatcher.ResponseData) => Promise<T>,
  ): Promise<T> {
    const endpoint = `${request.method} ${request.endpoint}`;
    // Built before the try: a missing path parameter is a bug to surface, not a network error to retry.
    const path = this.#path(request);
    const permit = await this.#admit(endpoint);
    const started = performance.now();
    let status: number | 'error' = 'error';
    const deadline = timeout.whole ? wholeExchangeDeadline(this.#config.requestTimeoutMs) : undefined;
    try {
      const response = await this.#pool.request({
        method: request.method,
        path,
        headers: {
          accept: 'application/json',
          ...(request.body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
        },
        body: request.body === undefined ? null : JSON.stringify(request.body),
        ...(deadline ? { signal: deadline.signal } : {}),
      });
      status = response.statusCode;
      return await read(endpoint, response);
    } catch (error) {
      if (deadline?.passed) throw new StoreTimeoutError(`no answer within the timeout (${this.#config.requestTimeoutMs} ms)`, { endpoint, cause: error });
      throw this.#asStoreError(error, endpoint);
    } finally {
      deadline?.clear();
      const durationMs = performance.now() - started;
      const labels = { endpoint: request.endpoint, method: request.method };
      this.#metrics?.storeRequests.inc({ ...labels, status: String(status) });
      this.#metrics?.storeRequestDuration.observe(labels, durationMs / 1000);
      this.#events.emit('store:request', { ...labels, status, durationMs, attempt });
      if (this.#logger.isLevelEnabled('debug')) this.#logger.debug({ ...labels, status, durationMs: Math.round(durationMs), attempt }, 'store request');
      permit?.release();
    }
  }

  /** Waits for the request budget; a budget that cannot be consulted (Redis down) is a temporary failure. */
  async #admit(endpoint: string): Promise<RequestPermit | undefined> {
    if (this.#limiter === undefined) return undefined;
    try {
      return await this.#limiter.acquire();
    } catch (error) {
      throw new StoreNetworkError(`the store-wide rate limit cannot be consulted (${(error as Error).message})`, { endpoint, cause: error });
    }
  }

  #interpret(
    method: HttpMethod,
    endpoint: string,
    status: number,
    retryAfter: string | string[] | undefined,
    text: string,
    attempt: number,
  ): unknown {
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
          this.#logger.debug({ endpoint, status, body: bodyExcerpt(text) }, 'store answered a write with a body that is not JSON; taken as success');
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
      const { baseDelayMs, maxDelayMs } = this.#config.retry;
      const wait = parseRetryAfter(retryAfter, this.#now()) ?? backoffMs(attempt, baseDelayMs, maxDelayMs);
      throw new StoreRateLimitedError(`rate limited (${said})`, details(), wait);
    }
    if (status >= 500) throw new StoreServerError(said, details());
    if (status >= 400) throw new StoreBadRequestError(said, details());
    throw new StoreBadResponseError(`unexpected HTTP status ${status}`, details());
  }

  #asStoreError(error: unknown, endpoint: string): StoreError {
    if (error instanceof StoreError) return error;
    const code = errorCode(error);
    const name = error instanceof Error ? error.name : '';
    // The deadline of the whole exchange is told apart by the caller (`ExchangeDeadline.passed`).
    if (code !== undefined && TIMEOUT_CODES.has(code)) {
      return new StoreTimeoutError(`no answer within the timeout (${code ?? name})`, { endpoint, cause: error });
    }
    return new StoreNetworkError(`request failed (${code ?? (name || 'network error')})`, { endpoint, cause: error });
  }
}

/** The deadline of a whole exchange (`wholeExchangeDeadline`). */
interface ExchangeDeadline {
  /** What undici listens to: it ends the request on 'abort'. */
  readonly signal: EventEmitter;
  /** Set once the deadline passed: the request failed for it. */
  passed: boolean;
  /** Called when the exchange is over, answered or not. */
  clear(): void;
}

/**
 * The deadline of a whole exchange: after `ms` the request is ended, as `AbortSignal.timeout(ms)` would
 * end it. Not an AbortSignal: on Node 20 `AbortSignal.timeout` costs about 15 µs a request and keeps its
 * timer and signal alive for the whole timeout after the answer came (some 30,000 of them in the heap at
 * a thousand requests a second), and an AbortController with undici's listener still costs about 10 µs;
 * undici also takes an EventEmitter as its signal, at well under 1 µs.
 */
function wholeExchangeDeadline(ms: number): ExchangeDeadline {
  const signal = new EventEmitter();
  const deadline: ExchangeDeadline = {
    signal,
    passed: false,
    clear: () => clearTimeout(timer),
  };
  const timer = setTimeout(() => {
    deadline.passed = true;
    signal.emit('abort');
  }, ms);
  // Like AbortSignal.timeout's: a request in flight keeps the process alive by its socket, not its deadline.
  timer.unref();
  return deadline;
}

/**
 * Reads a 2xx body: a JSON array is parsed as it streams in and each element handed to `visit` (the
 * parser keeps none of them); any other body is returned as text (small: an object, a message) for
 * the usual reading. Malformed JSON is a StoreBadResponseError; an error of `visit` passes through.
 */
async function parseArrayBody(body: AsyncIterable<Uint8Array>, visit: ElementVisitor, endpoint: string): Promise<string | undefined> {
  let parser: JsonArrayReader | undefined;
  let other: Uint8Array[] | undefined;
  const pending: Uint8Array[] = [];
  let index = 0;
  let visitError: unknown;
  const write = (chunk: Uint8Array): void => {
    try {
      parser?.write(chunk);
    } catch (error) {
      if (error === visitError) throw error;
      throw new StoreBadResponseError(`response is not JSON (${error instanceof Error ? error.message : String(error)})`, { endpoint });
    }
  };
  for await (const chunk of body) {
    if (parser) write(chunk);
    else if (other) other.push(chunk);
    else {
      pending.push(chunk);
      const first = chunk.find((byte) => byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09);
      if (first === undefined) continue;
      if (first !== 0x5b /* [ */) {
        other = pending;
        continue;
      }
      parser = new JsonArrayReader((element) => {
        try {
          visit(element, index++);
        } catch (error) {
          visitError = error;
          throw error;
        }
      });
      for (const early of pending.splice(0)) write(early);
    }
  }
  if (parser) {
    // The parser ends by itself with the array's closing bracket; a body that stops before is cut short.
    if (!parser.isEnded) throw new StoreBadResponseError('response is not JSON (the array is cut short)', { endpoint });
    return undefined;
  }
  return Buffer.concat(other ?? pending).toString('utf8');
}
