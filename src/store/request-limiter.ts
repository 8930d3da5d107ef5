/**
 * The store-wide request budget, as the store layer sees it: before each request (every attempt, the
 * login included) the transport waits for the limiter's permission, and tells it when the answer (or
 * the failure) came back. The store owns this interface so that it never depends on how the budget is
 * shared; the Redis implementation lives in src/queue/.
 */

/** Permission for one request; `release()` once its answer or failure is in. */
export interface RequestPermit {
  release(): void;
}

/** Grants permission for one request to the store. */
export interface RequestLimiter {
  /** Resolves when one more request fits in the budget; rejects when the budget cannot be consulted. */
  acquire(): Promise<RequestPermit>;
}
