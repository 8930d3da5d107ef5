/**
 * How errors become job outcomes in the sales and fulfillment workers. The error's `retryable` decides,
 * whatever its class: temporary failures (network, timeouts, 5xx, 408, 429, deadlocks, a lost database
 * connection) are retried with backoff; permanent ones (validation, a 4xx refusal of the store or the
 * ERP, a constraint violation) fail the job at once as BullMQ's UnrecoverableError, keeping their reason
 * in the failed job, so no attempts are wasted on what cannot succeed.
 */
import { UnrecoverableError } from 'bullmq';

import { StoreSyncError } from '../errors.js';

/** The error a processor throws to BullMQ for `error`. */
export function toJobError(error: unknown): Error {
  if (error instanceof StoreSyncError && !error.retryable) return new UnrecoverableError(`${error.code}: ${error.message}`);
  return error instanceof Error ? error : new Error(String(error));
}
