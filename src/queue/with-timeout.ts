/**
 * Bounds a promise in time. Redis commands on a BullMQ connection wait forever while Redis is down
 * (`maxRetriesPerRequest: null`), so anything answering an HTTP request must not await them unbounded.
 */

import { StoreSyncError } from '../errors.js';

/** Raised when `withTimeout` gives up; the underlying operation may still finish later (code `ERR_TIMEOUT`). */
export class TimeoutError extends StoreSyncError {
  constructor(what: string, ms: number) {
    super('ERR_TIMEOUT', `${what} did not answer within ${ms} ms`, { retryable: true });
  }
}

/** Resolves like `promise`, or rejects with `TimeoutError` after `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
