/**
 * HTTP to the store: one undici keep-alive pool, retries with capped exponential backoff and full jitter
 * (src/store/retry-policy.ts), responses read into typed errors (src/store/response-errors.ts), JSON
 * arrays streamed (src/store/array-body.ts), metrics and events. URLs carry the hash in the query
 * string, so nothing here ever puts a URL in a message: errors, logs and metric labels use the endpoint
 * template (`PUT /Api/Inventory`, `/Api/Sale/{id}`).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

import type { Dispatcher } from 'undici';

import type { StoreConfig } from '../config/schema.js';
import type { TypedEmitter } from '../events.js';
import type { Logger } from '../log.js';
import { Pool } from '../undici-parts.js';
import { parseArrayBody } from './array-body.js';
import { type StoreError, StoreNetworkError, StoreRateLimitedError, StoreTimeoutError } from './errors.js';
import { wholeExchangeDeadline } from './exchange-deadline.js';
import type { StoreMetrics } from './metrics.js';
import type { CallOptions, ElementVisitor, QueryValue, StoreEvents, StoreRequest, StreamOptions } from './request.js';
import type { RequestLimiter, RequestPermit } from './request-limiter.js';
import { asStoreError, interpretResponse, type StoreAnswer } from './response-errors.js';
import { backoffMs, isRetryable } from './retry-policy.js';
import { requestWhole } from './whole-body.js';

export type { CallOptions, ElementVisitor, HttpMethod, QueryValue, StoreApi, StoreEvents, StoreRequest, StreamOptions } from './request.js';
export { readAs } from './response-errors.js';
export { backoffMs, MAX_RETRY_AFTER_MS, parseRetryAfter } from './retry-policy.js';

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
  readonly #pool: InstanceType<typeof Pool>;
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
    return this.#retrying(request, options, (attempt) => this.#exchangeWhole(request, attempt));
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
          this.#exchange(request, attempt, async (endpoint, response) => {
            if (response.statusCode < 200 || response.statusCode >= 300) {
              return this.#interpret({ method: request.method, endpoint, status: response.statusCode, retryAfter: response.headers['retry-after'], text: await response.body.text(), attempt });
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
            const other = await parseArrayBody(response.body, counting, endpoint, options.betweenChunks);
            return other === undefined ? undefined : this.#interpret({ method: request.method, endpoint, status: response.statusCode, retryAfter: undefined, text: other, attempt });
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
    const path = request.endpoint.includes('{')
      ? request.endpoint.replace(/\{(\w+)\}/g, (_match, name: string) => {
          const value = request.params?.[name];
          if (value === undefined) throw new Error(`store request ${request.endpoint}: path parameter ${name} missing`);
          return encodeURIComponent(String(value));
        })
      : request.endpoint;
    const search = request.query === undefined ? '' : searchOf(request.query);
    return `${this.#basePath}${path}${search ? `?${search}` : ''}`;
  }

  /** One exchange read as a stream (`streamArray`): `read` takes the response once its headers came. */
  async #exchange<T>(request: StoreRequest, attempt: number, read: (endpoint: string, response: Dispatcher.ResponseData) => Promise<T>): Promise<T> {
    const endpoint = `${request.method} ${request.endpoint}`;
    // Built before the try: a missing path parameter is a bug to surface, not a network error to retry.
    const path = this.#path(request);
    const permit = await this.#admit(endpoint);
    const started = performance.now();
    let status: number | 'error' = 'error';
    try {
      const response = await this.#pool.request({ method: request.method, path, headers: headersOf(request), body: bodyOf(request) });
      status = response.statusCode;
      return await read(endpoint, response);
    } catch (error) {
      throw asStoreError(error, endpoint);
    } finally {
      this.#record(request, status, started, attempt);
      permit?.release();
    }
  }

  /**
   * One exchange read whole (`request`), within `requestTimeoutMs` from start to end, through undici's
   * handler interface (`whole-body.ts`): no response stream per request.
   */
  async #exchangeWhole(request: StoreRequest, attempt: number): Promise<unknown> {
    const endpoint = `${request.method} ${request.endpoint}`;
    // Built before the permit is taken, as the path is: a body with no JSON form is a bug to surface, and
    // nothing between the permit and the try below may throw (the permit would never be released).
    const path = this.#path(request);
    const body = bodyOf(request);
    const permit = await this.#admit(endpoint);
    const started = performance.now();
    let status: number | 'error' = 'error';
    const exchange = requestWhole(this.#pool, { method: request.method, path, headers: headersOf(request), body });
    exchange.onStatus = (code) => {
      status = code;
    };
    const deadline = wholeExchangeDeadline(this.#config.requestTimeoutMs, () => exchange.abort(new Error('the exchange deadline passed')));
    try {
      const answer = await exchange.answer;
      return this.#interpret({ method: request.method, endpoint, status: answer.statusCode, retryAfter: answer.retryAfter, text: answer.text, attempt });
    } catch (error) {
      if (deadline.passed) throw new StoreTimeoutError(`no answer within the timeout (${this.#config.requestTimeoutMs} ms)`, { endpoint, cause: error });
      throw asStoreError(error, endpoint);
    } finally {
      deadline.clear();
      this.#record(request, status, started, attempt);
      permit?.release();
    }
  }

  /** Counts, times and tells one exchange. */
  #record(request: StoreRequest, status: number | 'error', started: number, attempt: number): void {
    const durationMs = performance.now() - started;
    const labels = { endpoint: request.endpoint, method: request.method };
    this.#metrics?.storeRequests.inc({ ...labels, status: String(status) });
    this.#metrics?.storeRequestDuration.observe(labels, durationMs / 1000);
    this.#events.emit('store:request', { ...labels, status, durationMs, attempt });
    if (this.#logger.isLevelEnabled('debug')) this.#logger.debug({ ...labels, status, durationMs: Math.round(durationMs), attempt }, 'store request');
  }

  #interpret(answer: StoreAnswer): unknown {
    return interpretResponse(answer, { retry: this.#config.retry, now: this.#now, logger: this.#logger });
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
}

/** A request's headers: the same two objects for every request (undici only reads them). */
const ACCEPT_JSON = { accept: 'application/json' };
const SEND_JSON = { accept: 'application/json', 'content-type': 'application/json; charset=utf-8' };

function headersOf(request: StoreRequest): Record<string, string> {
  return request.body === undefined ? ACCEPT_JSON : SEND_JSON;
}

function bodyOf(request: StoreRequest): string | null {
  return request.body === undefined ? null : JSON.stringify(request.body);
}

/** The query strings of frozen query objects (a resource's constant query, as the PUT's `mode`): built once. */
const frozenQueries = new WeakMap<object, string>();

/** A query as its URL's search part (without `?`): undefined and null left out, a list comma-separated. */
export function searchOf(query: Readonly<Record<string, QueryValue>>): string {
  const cached = frozenQueries.get(query);
  if (cached !== undefined) return cached;
  const params = new URLSearchParams();
  let constant = Object.isFrozen(query);
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    // A list may change under a frozen object: such a query is built again each time.
    if (Array.isArray(value)) constant = false;
    params.append(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const search = params.toString();
  if (constant) frozenQueries.set(query, search);
  return search;
}
