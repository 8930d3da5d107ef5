/**
 * How errors become job outcomes in the sales and fulfillment workers. The error's `retryable` decides,
 * whatever its class: temporary failures (network, timeouts, 5xx, 408, 429, deadlocks, a lost database
 * connection) are retried with backoff; permanent ones (validation, a 4xx refusal of the store or the
 * ERP, a constraint violation) fail the job at once as BullMQ's UnrecoverableError, keeping their reason
 * in the failed job, so no attempts are wasted on what cannot succeed.
 *
 * Refused store credentials are neither: the job is held (`holdForCredentials`), its queue paused until
 * the next login may be tried, so that every change queued meanwhile reaches the store once the
 * credentials are right again.
 */
import { type Queue, UnrecoverableError, Worker } from 'bullmq';

import { StoreSyncError } from '../errors.js';
import { StoreLoginRefusedError } from '../store/errors.js';

/**
 * When `error` says the store refused the credentials: pauses `queue` (every worker of every process)
 * until the next login may be tried, and returns the error that gives the job back to BullMQ without
 * spending an attempt; undefined for any other error. The pause was logged once by the store session.
 */
export async function holdForCredentials(queue: Pick<Queue, 'rateLimit'>, error: unknown): Promise<Error | undefined> {
  if (!(error instanceof StoreLoginRefusedError)) return undefined;
  await queue.rateLimit(error.retryAfterMs);
  return Worker.RateLimitError();
}

/** The error a processor throws to BullMQ for `error`. */
export function toJobError(error: unknown): Error {
  if (error instanceof StoreSyncError && !error.retryable) return new UnrecoverableError(`${error.code}: ${error.message}`);
  return error instanceof Error ? error : new Error(String(error));
}
