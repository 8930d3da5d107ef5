/**
 * Logins to the store, coordinated across every process sharing the Redis prefix: one login at a time
 * (a lock whose value is its owner, held until the answer came), and at most `max` logins started in
 * any minute that the store did not accept (a sliding-window log; an accepted login leaves it, so
 * processes restarting together never wait for the budget while the credentials are right). Both keys
 * hold only owner ids and times: never the user name, the password or the hash. A process that dies
 * mid-login holds the lock for at most `holdMs`.
 */
import { randomUUID } from 'node:crypto';

import type { Redis } from 'ioredis';

import type { StoreConfig } from '../config/schema.js';
import type { LoginAdmission, LoginGate } from './login-gate.js';

/** The window of `store.maxLoginsPerMinute`. */
const WINDOW_MS = 60_000;
/** How often a process waiting for another's login looks again: the lock goes as soon as that login is answered. */
const LOCK_POLL_MS = 100;

/**
 * KEYS[1]: the lock, KEYS[2]: the window's sorted set. ARGV: max, windowMs, holdMs, the owner (unique
 * per login). Admitted: the lock is taken, the login logged, 0 returned. Otherwise: the milliseconds to
 * wait, negative while another login holds the lock (its remaining lease), positive for the budget.
 */
const ACQUIRE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease = redis.call('PTTL', KEYS[1])
if lease > 0 then return -lease end
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[1]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now + 1)
end
redis.call('SET', KEYS[1], ARGV[4], 'PX', tonumber(ARGV[3]))
redis.call('ZADD', KEYS[2], now, ARGV[4])
redis.call('PEXPIRE', KEYS[2], window)
return 0
`;

/**
 * KEYS[1]: the lock, KEYS[2]: the window. ARGV[1]: the owner, ARGV[2]: '1' when the store accepted the
 * login. Deletes the lock if this login still holds it; an accepted login leaves the window.
 */
const RELEASE = `
if ARGV[2] == '1' then redis.call('ZREM', KEYS[2], ARGV[1]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/** Options of the Redis login gate. */
export interface RedisLoginGateOptions {
  /** `redis.prefix`: the keys are `<prefix>:store-login:lock` and `<prefix>:store-login:window`. */
  prefix: string;
  /** Logins started per minute, across every process sharing the prefix (`store.maxLoginsPerMinute`). */
  maxPerMinute: number;
  /** Longest a login can take (connect plus response timeouts): how long a dead process's lock is held. */
  holdMs: number;
}

/** The login gate kept in Redis; see the module comment. */
export class RedisLoginGate implements LoginGate {
  readonly #redis: Redis;
  readonly #lockKey: string;
  readonly #windowKey: string;
  readonly #options: RedisLoginGateOptions;
  readonly #id = randomUUID();
  #sequence = 0;

  /** Uses `redis` (not closed by the gate) for one short script per admission and per release. */
  constructor(redis: Redis, options: RedisLoginGateOptions) {
    this.#redis = redis;
    this.#options = options;
    this.#lockKey = `${options.prefix}:store-login:lock`;
    this.#windowKey = `${options.prefix}:store-login:window`;
  }

  async tryAcquire(): Promise<LoginAdmission> {
    const { maxPerMinute, holdMs } = this.#options;
    this.#sequence += 1;
    const owner = `${this.#id}:${this.#sequence}`;
    const waitMs = Number(await this.#redis.eval(ACQUIRE, 2, this.#lockKey, this.#windowKey, maxPerMinute, WINDOW_MS, holdMs, owner));
    if (waitMs < 0) return { waitMs: Math.min(-waitMs, LOCK_POLL_MS), reason: 'busy' };
    if (waitMs > 0) return { waitMs, reason: 'budget' };
    return {
      permit: {
        // Not awaited by the login: should Redis fail here, the lock simply lasts `holdMs`.
        release: (accepted) => void this.#redis.eval(RELEASE, 2, this.#lockKey, this.#windowKey, owner, accepted ? '1' : '0').catch(() => undefined),
      },
    };
  }
}

/** The login gate of `store.maxLoginsPerMinute` on the connection `redis()` opens. */
export function storeLoginGate(
  store: Pick<StoreConfig, 'maxLoginsPerMinute' | 'connectTimeoutMs' | 'requestTimeoutMs'>,
  prefix: string,
  redis: () => Redis,
): RedisLoginGate {
  return new RedisLoginGate(redis(), { prefix, maxPerMinute: store.maxLoginsPerMinute, holdMs: store.connectTimeoutMs + store.requestTimeoutMs });
}
