/**
 * `store.rateLimit` as one budget shared by every flow and every process: a sliding-window log in Redis,
 * one sorted set under the configured prefix, on Redis's own clock (processes on several hosts agree).
 *
 * A request takes a slot when admitted and keeps it until `durationMs` after its answer came back: the
 * store received it before the answer left, so the store never sees more than `max` requests in any
 * window of `durationMs`, however long requests travel or wait in a busy process. (Counting from the
 * admission instead lets a request delayed on its way land in the next window next to that window's
 * own.) The price is a little throughput: a slot serves one request per `durationMs` plus its latency.
 * No burst beyond `max`. A process that dies mid-request holds its slot for at most `holdMs`.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';

import type { Redis } from 'ioredis';

import type { StoreConfig } from '../config/schema.js';
import type { RequestLimiter, RequestPermit } from './request-limiter.js';

/**
 * KEYS[1]: the window's sorted set. ARGV: max, durationMs, holdMs, a unique member. Admitted: the
 * member is added with a score in the future (in flight) and 0 is returned. Otherwise: the
 * milliseconds until the oldest slot leaves the window.
 */
const ACQUIRE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local max = tonumber(ARGV[1])
local duration = tonumber(ARGV[2])
local hold = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - duration)
if redis.call('ZCARD', KEYS[1]) < max then
  redis.call('ZADD', KEYS[1], now + hold, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], hold + duration)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + duration - now + 1)
`;

/** KEYS[1]: the window. ARGV: holdMs, durationMs, the member. The slot now counts from this instant. */
const RELEASE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]))
end
return 0
`;

/** Options of the Redis request limiter. */
export interface RedisRequestLimiterOptions {
  /** `redis.prefix`: the budget's key is `<prefix>:store-rate-limit`. */
  prefix: string;
  /** Requests per `durationMs`, across every process sharing the prefix. */
  max: number;
  durationMs: number;
  /** Longest a request can take (connect plus response timeouts): how long a dead process's slot is held. */
  holdMs: number;
}

/** The budget of `store.rateLimit` kept in Redis; see the module comment. */
export class RedisRequestLimiter implements RequestLimiter {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #options: RedisRequestLimiterOptions;
  readonly #id = randomUUID();
  #sequence = 0;

  /** Uses `redis` (not closed by the limiter) for one short script per admission and per release. */
  constructor(redis: Redis, options: RedisRequestLimiterOptions) {
    this.#redis = redis;
    this.#options = options;
    this.#key = `${options.prefix}:store-rate-limit`;
  }

  async acquire(): Promise<RequestPermit> {
    const { max, durationMs, holdMs } = this.#options;
    this.#sequence += 1;
    const member = `${this.#id}:${this.#sequence}`;
    for (;;) {
      const waitMs = Number(await this.#redis.eval(ACQUIRE, 1, this.#key, max, durationMs, holdMs, member));
      if (waitMs <= 0) break;
      // The oldest slot may still be in flight (its score lies in the future): look again within a window.
      // Several waiters may wake together; the script admits only as many as fit.
      await delay(Math.min(waitMs, durationMs));
    }
    return {
      // Not awaited by the request: should Redis fail here, the slot simply lasts `holdMs`.
      release: () => void this.#redis.eval(RELEASE, 1, this.#key, holdMs, durationMs, member).catch(() => undefined),
    };
  }
}

/** The limiter of `store.rateLimit` on the connection `redis()` opens, or undefined when no limit is configured. */
export function storeRateLimiter(
  store: Pick<StoreConfig, 'rateLimit' | 'connectTimeoutMs' | 'requestTimeoutMs'>,
  prefix: string,
  redis: () => Redis,
): RedisRequestLimiter | undefined {
  const limit = store.rateLimit;
  if (limit === null) return undefined;
  const holdMs = store.connectTimeoutMs + store.requestTimeoutMs;
  return new RedisRequestLimiter(redis(), { prefix, max: limit.max, durationMs: limit.durationMs, holdMs });
}
