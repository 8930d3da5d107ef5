/**
 * The store session: the auth hash, obtained from `GET /Api/Auth/`, cached, renewed after
 * `store.authRefreshMs` and after a 401. Renewal is single-flight: however many requests meet a 401
 * together, one login runs and all of them retry with its hash; a request whose 401 came from a hash
 * already replaced just retries with the newer one. Every login first asks the login gate (one at a
 * time and `store.maxLoginsPerMinute` across processes), when there is one.
 *
 * A login the store refuses for the credentials pauses the session: every call fails at once with a
 * StoreLoginRefusedError saying how long until the next login may be tried (`store.loginBackoff`,
 * doubling with each refusal), without a request. One error line says so; the first accepted login
 * says traffic resumed.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

import type { StoreConfig } from '../config/schema.js';
import type { TypedEmitter } from '../events.js';
import type { Logger } from '../log.js';
import { registerSecret } from '../secrets.js';
import { StoreAuthError, type StoreErrorDetails, StoreLoginDeferredError, StoreLoginRefusedError, StoreNetworkError } from './errors.js';
import type { LoginAdmission, LoginGate, LoginPermit } from './login-gate.js';
import type { StoreMetrics } from './metrics.js';
import { authResultSchema } from './schemas/index.js';
import { type CallOptions, type ElementVisitor, type QueryValue, readAs, type StoreApi, type StoreEvents, type StoreRequest, type StreamOptions, type Transport } from './transport.js';

const AUTH_ENDPOINT = '/Api/Auth/';

/** Options of the session. */
export interface AuthSessionOptions {
  config: StoreConfig;
  transport: Transport;
  logger: Logger;
  events: TypedEmitter<StoreEvents>;
  metrics?: StoreMetrics;
  now: () => number;
  /** Asked before every login; none: logins are only single-flight within this session. */
  loginGate?: LoginGate;
}

/** The pause after the store refused the credentials. */
interface Refusal {
  /** Refused logins in a row. */
  failures: number;
  /** No login before this instant (ms). */
  nextAttemptAt: number;
  /** What the store said, for the errors of the calls refused meanwhile. */
  reason: string;
  status: number | undefined;
}

const seconds = (ms: number): string => `${Math.ceil(ms / 1000)} s`;

function isUnauthorized(error: unknown): error is StoreAuthError {
  return error instanceof StoreAuthError && error.status === 401;
}

/** Holds the hash and sends authenticated requests. */
export class AuthSession implements StoreApi {
  readonly config: StoreConfig;
  readonly logger: Logger;
  readonly #transport: Transport;
  readonly #events: TypedEmitter<StoreEvents>;
  readonly metrics: StoreMetrics | undefined;
  readonly #now: () => number;
  readonly #gate: LoginGate | undefined;
  #current: { hash: string; obtainedAt: number } | undefined;
  #pending: Promise<string> | undefined;
  #refusal: Refusal | undefined;

  constructor(options: AuthSessionOptions) {
    this.config = options.config;
    this.#transport = options.transport;
    this.logger = options.logger;
    this.#events = options.events;
    this.metrics = options.metrics;
    this.#now = options.now;
    this.#gate = options.loginGate;
    registerSecret(options.config.password);
  }

  /** A hash to use now: the cached one while younger than `authRefreshMs`, otherwise a fresh login. */
  async hash(): Promise<string> {
    const current = this.#current;
    if (current && this.#now() - current.obtainedAt < this.config.authRefreshMs) return current.hash;
    return this.#loginOnce();
  }

  /** Logs in now (joining a login already under way) and returns the new hash. */
  async login(): Promise<string> {
    return this.#loginOnce();
  }

  /** Sends `request` with the hash; on a 401, renews the hash once and repeats it. */
  async request(request: StoreRequest, options?: CallOptions): Promise<unknown> {
    return this.#authenticated(request, (signed) => this.#transport.request(signed, options));
  }

  /** `streamArray` with the hash, renewed like `request` on a 401 (which comes before any element). */
  async streamArray(request: StoreRequest, visit: ElementVisitor, options?: StreamOptions): Promise<unknown> {
    return this.#authenticated(request, (signed) => this.#transport.streamArray(signed, visit, options));
  }

  async #authenticated<T>(request: StoreRequest, send: (signed: StoreRequest) => Promise<T>): Promise<T> {
    const hash = await this.hash();
    try {
      return await send(withHash(request, hash));
    } catch (error) {
      if (!isUnauthorized(error)) throw error;
      this.logger.info({ endpoint: request.endpoint, method: request.method }, 'store refused the hash; re-authenticating');
      const fresh = await this.#renew(hash);
      try {
        return await send(withHash(request, fresh));
      } catch (retryError) {
        if (!isUnauthorized(retryError)) throw retryError;
        throw new StoreAuthError('hash refused again right after re-authentication', {
          endpoint: retryError.endpoint,
          status: 401,
          ...(retryError.bodyExcerpt === undefined ? {} : { bodyExcerpt: retryError.bodyExcerpt }),
          cause: retryError,
        });
      }
    }
  }

  /** The hash to retry with after `stale` met a 401: a newer one if it exists, else a new login. */
  async #renew(stale: string): Promise<string> {
    const current = this.#current;
    if (current && current.hash !== stale) return current.hash;
    return this.#loginOnce();
  }

  #loginOnce(): Promise<string> {
    const paused = this.#paused();
    if (paused) return Promise.reject(paused);
    this.#pending ??= this.#login().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The error of a call made while the session is paused after a refusal; undefined when not paused. */
  #paused(): StoreLoginRefusedError | undefined {
    const refusal = this.#refusal;
    const waitMs = refusal === undefined ? 0 : refusal.nextAttemptAt - this.#now();
    if (refusal === undefined || waitMs <= 0) return undefined;
    return new StoreLoginRefusedError(
      `store traffic paused: the store refused the credentials (${refusal.reason}); next login attempt in ${seconds(waitMs)}`,
      { endpoint: `GET ${AUTH_ENDPOINT}`, ...(refusal.status === undefined ? {} : { status: refusal.status }) },
      waitMs,
    );
  }

  async #login(): Promise<string> {
    const endpoint = `GET ${AUTH_ENDPOINT}`;
    const permit = await this.#admit(endpoint);
    const started = performance.now();
    let accepted = false;
    try {
      const body = await this.#transport
        .request({
          method: 'GET',
          endpoint: AUTH_ENDPOINT,
          query: { username: this.config.username, password: this.config.password },
        })
        .catch((error: unknown) => {
          if (!isUnauthorized(error)) throw error;
          throw this.#refused('login refused: wrong username or password', { endpoint, status: 401, cause: error });
        });
      const result = readAs(authResultSchema, body, 'GET', AUTH_ENDPOINT);
      const status = result.status ?? '0';
      if (String(status) !== '0' || !result.data) {
        throw this.#refused(`login failed: ${String(status)} - ${result.message ?? (result.data ? '' : 'no hash in the answer')}`, { endpoint, status: 200 });
      }
      registerSecret(result.data, 'store-hash');
      this.#current = { hash: result.data, obtainedAt: this.#now() };
      accepted = true;
      this.#record('success', started);
      this.logger.info({ site: result.site ?? undefined }, 'logged in to the store');
      if (this.#refusal) {
        this.logger.info({ refusals: this.#refusal.failures }, 'store accepted the credentials: store traffic resumed');
        this.#refusal = undefined;
      }
      return result.data;
    } catch (error) {
      // A refused hash must not be reused: the next call logs in again instead of meeting another 401.
      this.#current = undefined;
      this.#record('failure', started);
      // A refusal was logged once, as the pause it starts.
      if (!(error instanceof StoreLoginRefusedError)) this.logger.error({ err: (error as Error).message }, 'store login failed');
      throw error;
    } finally {
      permit?.release(accepted);
    }
  }

  /**
   * Waits for the login gate while another login is under way; a gate that cannot be consulted (Redis
   * down) is a temporary failure. A spent budget is never waited for in place (it would hold every
   * caller for up to a minute): it extends the pause on refused credentials, or fails the calls with a
   * StoreLoginDeferredError that workers hold their jobs on.
   */
  async #admit(endpoint: string): Promise<LoginPermit | undefined> {
    if (this.#gate === undefined) return undefined;
    for (;;) {
      let admission: LoginAdmission;
      try {
        admission = await this.#gate.tryAcquire();
      } catch (error) {
        throw new StoreNetworkError(`the store login budget cannot be consulted (${(error as Error).message})`, { endpoint, cause: error });
      }
      if ('permit' in admission) return admission.permit;
      if (admission.reason === 'busy') {
        await delay(admission.waitMs);
        continue;
      }
      const refusal = this.#refusal;
      if (refusal === undefined) {
        throw new StoreLoginDeferredError(
          `login not sent: store.maxLoginsPerMinute (${this.config.maxLoginsPerMinute}) used up by the processes sharing the Redis prefix`,
          { endpoint },
          admission.waitMs,
        );
      }
      refusal.nextAttemptAt = Math.max(refusal.nextAttemptAt, this.#now() + admission.waitMs);
      this.logger.debug({ retryInMs: admission.waitMs }, 'store login budget spent (store.maxLoginsPerMinute); the pause is extended');
      throw this.#paused() ?? new StoreLoginRefusedError(`store traffic paused: ${refusal.reason}`, { endpoint }, admission.waitMs);
    }
  }

  /**
   * Pauses the session after the store refused the credentials, for `store.loginBackoff` doubled per
   * refusal in a row: one error line when the pause starts, a warning per refusal after that.
   */
  #refused(reason: string, details: StoreErrorDetails): StoreLoginRefusedError {
    const failures = (this.#refusal?.failures ?? 0) + 1;
    const { baseDelayMs, maxDelayMs } = this.config.loginBackoff;
    const waitMs = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(failures - 1, 30));
    this.#refusal = { failures, nextAttemptAt: this.#now() + waitMs, reason, status: details.status };
    this.metrics?.storeAuthFailures.inc();
    const fields = { refusals: failures, retryInMs: waitMs, err: reason };
    if (failures === 1) {
      this.logger.error(fields, `store refused the credentials (store.username, store.password): store traffic paused, jobs wait; next login attempt in ${seconds(waitMs)}`);
    } else {
      this.logger.warn(fields, `store refused the credentials again; next login attempt in ${seconds(waitMs)}`);
    }
    return new StoreLoginRefusedError(`${reason}; store traffic paused, next login attempt in ${seconds(waitMs)}`, details, waitMs);
  }

  #record(outcome: 'success' | 'failure', started: number): void {
    const durationMs = performance.now() - started;
    this.metrics?.storeLogins.inc({ outcome });
    this.#events.emit('store:auth', { outcome, durationMs });
  }
}

/** The signed copy of each frozen query, with the hash it carries. */
const signedQueries = new WeakMap<object, { hash: string; query: Readonly<Record<string, QueryValue>> }>();

function withHash(request: StoreRequest, hash: string): StoreRequest {
  const { query } = request;
  if (query === undefined || !Object.isFrozen(query)) return { ...request, query: { ...query, hash } };
  // A resource's constant query (frozen) gets one signed copy per hash, frozen too, so that the
  // transport builds its query string once per hash rather than once per request (issue 27).
  const signed = signedQueries.get(query);
  if (signed?.hash === hash) return { ...request, query: signed.query };
  const fresh = Object.freeze({ ...query, hash });
  signedQueries.set(query, { hash, query: fresh });
  return { ...request, query: fresh };
}
