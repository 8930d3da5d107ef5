/**
 * The limiter a worker needs so that `queue.rateLimit(ms)` pauses it: BullMQ honours a manual rate limit
 * only when `limiter.max` is set. This one never limits by itself; the store-wide request budget is
 * `store.rateLimit`, applied per request in the store client.
 */
export const MANUAL_RATE_LIMIT = { max: 1_000_000, duration: 1000 } as const;
