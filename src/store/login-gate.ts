/**
 * Who may log in to the store, and when: the session asks the gate before every login and tells it when
 * the answer came. The store owns this interface so that it never depends on how logins are counted
 * across processes; `RedisLoginGate` (src/store/redis-login-gate.ts) keeps one login at a time and at
 * most `store.maxLoginsPerMinute` across every process sharing the Redis prefix.
 */

/**
 * Permission for one login; `release(accepted)` once its answer or failure is in. A login the store
 * accepted is given back to the budget: the budget bounds the attempts a store could hold against the
 * account (refused or unanswered ones), not the logins of processes that restart.
 */
export interface LoginPermit {
  release(accepted: boolean): void;
}

/**
 * The gate's answer: a permit, or how long to wait before asking again because another login is under
 * way (`busy`, a short wait) or the budget of logins per minute is spent (`budget`).
 */
export type LoginAdmission = { permit: LoginPermit } | { waitMs: number; reason: 'busy' | 'budget' };

/** Grants permission for one login to the store. */
export interface LoginGate {
  /** Admits one login now or says how long to wait; rejects when the gate cannot be consulted. */
  tryAcquire(): Promise<LoginAdmission>;
}
