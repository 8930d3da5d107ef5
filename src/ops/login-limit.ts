/**
 * The limit on failed admin logins: at most 10 a minute per client address (the login page's form, or a
 * wrong bearer token or basic credentials in an `Authorization` header), then every login attempt from
 * that address is answered 429 with `Retry-After` until the oldest of its failures is a minute old. A
 * success is not counted, and does not clear the failures before it.
 *
 * Kept in this process's memory, not in Redis: the HTTP server holds no Redis connection (and /admin must
 * let an operator in while Redis is down), so each storesync process allows its own 10 a minute. The
 * memory is bounded: at most `maxAddresses` addresses are remembered, the one that failed least recently
 * is forgotten first.
 */

import type { FastifyRequest } from 'fastify';

import type { Logger } from '../log.js';
import { audit } from './audit.js';

/** Failed logins allowed per address in a window. */
export const LOGIN_FAILURES_PER_WINDOW = 10;
/** The window: a minute. */
export const LOGIN_WINDOW_MS = 60_000;
/** Addresses remembered at most (each holds at most `LOGIN_FAILURES_PER_WINDOW` times: about 1 MB in all). */
const MAX_ADDRESSES = 10_000;

/** Options of `LoginLimit`. */
export interface LoginLimitOptions {
  limit?: number;
  windowMs?: number;
  maxAddresses?: number;
  /** The clock (ms). */
  now?: () => number;
}

/** An address's failures in the window, oldest first, and whether its refusal was reported since it was limited. */
interface Failures {
  times: number[];
  reported: boolean;
}

/** What `check` found for an address. */
export type LoginCheck = { allowed: true } | { allowed: false; retryAfterSeconds: number; firstRefusal: boolean };

/** Counts failed logins per client address; see the module comment. */
export class LoginLimit {
  readonly #failures = new Map<string, Failures>();
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxAddresses: number;
  readonly #now: () => number;

  constructor(options: LoginLimitOptions = {}) {
    this.#limit = options.limit ?? LOGIN_FAILURES_PER_WINDOW;
    this.#windowMs = options.windowMs ?? LOGIN_WINDOW_MS;
    this.#maxAddresses = options.maxAddresses ?? MAX_ADDRESSES;
    this.#now = options.now ?? Date.now;
  }

  /** The failures of `address` still in the window (forgetting it when none is). */
  #current(address: string): Failures | undefined {
    const entry = this.#failures.get(address);
    if (!entry) return undefined;
    const since = this.#now() - this.#windowMs;
    while (entry.times.length > 0 && entry.times[0]! <= since) entry.times.shift();
    if (entry.times.length > 0) return entry;
    this.#failures.delete(address);
    return undefined;
  }

  /**
   * Whether `address` may try to log in now; if not, in how many seconds it may, and whether this is the
   * first refusal since it reached the limit (the one worth an audit line).
   */
  check(address: string): LoginCheck {
    const entry = this.#current(address);
    if (!entry) return { allowed: true };
    if (entry.times.length < this.#limit) {
      entry.reported = false;
      return { allowed: true };
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((entry.times[0]! + this.#windowMs - this.#now()) / 1000));
    const firstRefusal = !entry.reported;
    entry.reported = true;
    return { allowed: false, retryAfterSeconds, firstRefusal };
  }

  /** Records a failed login of `address`; returns its failures in the window, this one included. */
  fail(address: string): number {
    const entry = this.#current(address) ?? { times: [], reported: false };
    entry.times.push(this.#now());
    // Re-inserted: the Map's first entry is the address that failed least recently.
    this.#failures.delete(address);
    this.#failures.set(address, entry);
    if (this.#failures.size > this.#maxAddresses) this.#failures.delete(this.#failures.keys().next().value as string);
    return entry.times.length;
  }

  /** Addresses remembered now. */
  get size(): number {
    return this.#failures.size;
  }
}

/**
 * Seconds until the request's address may try again (the `Retry-After` of its 429), or undefined when it
 * may now; the first refusal after the limit is reached is audited (not each one: no log flood).
 */
export function refuseIfLimited(limit: LoginLimit, request: FastifyRequest, logger: Logger): number | undefined {
  const check = limit.check(request.ip);
  if (check.allowed) return undefined;
  if (check.firstRefusal) {
    audit(logger, { user: 'anonymous', action: 'admin:login:limited', ip: request.ip, url: request.url, retryAfterSeconds: check.retryAfterSeconds }, 'warn');
  }
  return check.retryAfterSeconds;
}

/** Counts a failed login of the request's address and audits it (never what was sent). */
export function recordFailedLogin(limit: LoginLimit, request: FastifyRequest, logger: Logger): void {
  const failures = limit.fail(request.ip);
  audit(logger, { user: 'anonymous', action: 'admin:login:failed', ip: request.ip, url: request.url, failures }, 'warn');
}
