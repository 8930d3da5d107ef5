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
import type { Queue } from 'bullmq';

import { StoreSyncError } from '../errors.js';
import { UnrecoverableError, Worker } from '../queue/bullmq-parts.js';
import { StoreLoginDeferredError, StoreLoginRefusedError } from '../store/errors.js';

/**
 * Longest a queue is paused at a time for refused credentials or a spent login budget. The session's
 * own pause may be longer (its backoff doubles up to `store.loginBackoff.maxDelayMs`), but the queue's
 * pause is shared in Redis: a process restarted with the right password must not wait for it, only for this.
 */
export const CREDENTIALS_HOLD_MAX_MS = 10_000;

/** Whether `error` means that no login can be made now: refused credentials or a spent login budget. */
export function isLoginHold(error: unknown): error is StoreLoginRefusedError | StoreLoginDeferredError {
  return error instanceof StoreLoginRefusedError || error instanceof StoreLoginDeferredError;
}

/** How long a queue holds its jobs after `error`: until the next login may be tried, at most `CREDENTIALS_HOLD_MAX_MS`. */
export function credentialsHoldMs(error: StoreLoginRefusedError | StoreLoginDeferredError): number {
  return Math.max(1, Math.min(error.retryAfterMs, CREDENTIALS_HOLD_MAX_MS));
}

/**
 * The level of a scheduled run's failure (a pull, a reconcile): debug while store traffic is paused on
 * the credentials or the login budget, which the store session reported once; error otherwise.
 */
export function scheduledFailureLevel(error: unknown): 'debug' | 'error' {
  return isLoginHold(error) ? 'debug' : 'error';
}

/**
 * When `error` says no login can be made now (refused credentials, a spent login budget): pauses `queue`
 * (every worker of every process) for `credentialsHoldMs`, and returns the error that gives the job
 * back to BullMQ without spending an attempt; undefined for any other error. A refusal was logged once,
 * by the store session.
 */
export async function holdForCredentials(queue: Pick<Queue, 'rateLimit'>, error: unknown): Promise<Error | undefined> {
  if (!isLoginHold(error)) return undefined;
  await queue.rateLimit(credentialsHoldMs(error));
  return Worker.RateLimitError();
}

/** The error a processor throws to BullMQ for `error`. */
export function toJobError(error: unknown): Error {
  if (error instanceof StoreSyncError && !error.retryable) return new UnrecoverableError(`${error.code}: ${error.message}`);
  return error instanceof Error ? error : new Error(String(error));
}
