/**
 * Readiness: Redis answers PING and the store accepts us. The daemon's store check is its session
 * (`StoreClient.authenticate`): the current hash, or a login when there is none, so that probes add no
 * logins of their own to `store.maxLoginsPerMinute`; while the store refuses the credentials the session
 * is paused and the check fails at once, without a login. The store check is cached for a few seconds
 * (success and failure alike) and concurrent probes share it.
 */
import { withTimeout } from '../queue/with-timeout.js';
import { redactText } from '../secrets.js';

/** The Redis side of the check: only PING is needed. */
export interface PingClient {
  ping(): Promise<string>;
}

/** The store side of the check: resolves when the store accepts us (the daemon: the session's hash). */
export interface LoginClient {
  login(): Promise<unknown>;
}

/** The result of one dependency check. */
export interface CheckResult {
  ok: boolean;
  /** Why it failed (secrets removed). */
  error?: string;
}

/** The body of /readyz. */
export interface ReadinessReport {
  ok: boolean;
  checks: { redis: CheckResult; store: CheckResult };
}

/** Options of `Readiness`. */
export interface ReadinessOptions {
  redis: PingClient;
  store: LoginClient;
  /** How long a store check result is reused (10 s). */
  storeCacheMs?: number;
  /** Time allowed to each check. */
  timeoutMs?: number;
  /** Words for a failed Redis check (the daemon: the outage's cause and start, src/ops/redis-outage.ts); default: the error's code and message. */
  explainRedis?: (error: unknown) => Promise<string>;
  now?: () => number;
}

/** Runs the readiness checks. */
export class Readiness {
  readonly #redis: PingClient;
  readonly #store: LoginClient;
  readonly #cacheMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #explainRedis: (error: unknown) => Promise<string>;
  #storeResult: { at: number; result: Promise<CheckResult> } | undefined;

  constructor(options: ReadinessOptions) {
    this.#redis = options.redis;
    this.#store = options.store;
    this.#cacheMs = options.storeCacheMs ?? 10_000;
    this.#timeoutMs = options.timeoutMs ?? 3000;
    this.#now = options.now ?? Date.now;
    this.#explainRedis = options.explainRedis ?? (async (error) => errorText(error));
  }

  /** Checks Redis now and the store at most once per cache period. */
  async check(): Promise<ReadinessReport> {
    const [redis, store] = await Promise.all([this.#checkRedis(), this.#checkStore()]);
    return { ok: redis.ok && store.ok, checks: { redis, store } };
  }

  async #checkRedis(): Promise<CheckResult> {
    try {
      await withTimeout(this.#redis.ping(), this.#timeoutMs, 'redis PING');
      return { ok: true };
    } catch (error) {
      return { ok: false, error: redactText(await this.#explainRedis(error)) };
    }
  }

  #checkStore(): Promise<CheckResult> {
    const now = this.#now();
    if (!this.#storeResult || now - this.#storeResult.at >= this.#cacheMs) {
      this.#storeResult = { at: now, result: settle(withTimeout(this.#store.login(), this.#timeoutMs, 'store login')) };
    }
    return this.#storeResult.result;
  }
}

async function settle(promise: Promise<unknown>): Promise<CheckResult> {
  try {
    await promise;
    return { ok: true };
  } catch (error) {
    return { ok: false, error: redactText(errorText(error)) };
  }
}

/** `CODE: message`, or the message when the error has no code. */
function errorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}
