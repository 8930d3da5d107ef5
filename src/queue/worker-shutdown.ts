/**
 * Graceful shutdown of BullMQ workers: running jobs get `timeoutMs` to finish; after that their
 * processors are aborted, and a processor that honours the abort returns its job to the queue
 * (`returnJobOnAbort`) so another worker (or this one after a restart) runs it again without spending
 * an attempt.
 */
import type { Job, Worker } from 'bullmq';

import type { Logger } from '../log.js';
import { WaitingError } from './bullmq-parts.js';
import { TimeoutError, withTimeout } from './with-timeout.js';

/** How a worker ended: its jobs finished, were returned after the deadline, or were left to the stalled check. */
export type WorkerCloseOutcome = 'finished' | 'returned' | 'abandoned';

/** Time allowed, after the abort, for processors to hand their jobs back. */
const RETURN_GRACE_MS = 5000;

/** Closes `worker`, waiting at most `timeoutMs` for its jobs before aborting them. */
export async function closeWorkerWithin(worker: Worker, timeoutMs: number, logger: Logger): Promise<WorkerCloseOutcome> {
  const closing = worker.close();
  try {
    await withTimeout(closing, timeoutMs, `worker ${worker.name}`);
    return 'finished';
  } catch (error) {
    if (!(error instanceof TimeoutError)) throw error;
  }
  logger.warn({ queue: worker.name, timeoutMs }, 'jobs still running at the shutdown deadline: returning them to the queue');
  worker.cancelAllJobs('shutdown');
  try {
    await withTimeout(closing, RETURN_GRACE_MS, `worker ${worker.name} after abort`);
    return 'returned';
  } catch (error) {
    if (!(error instanceof TimeoutError)) throw error;
    // The job's lock expires and the stalled check of a running worker puts it back in the queue.
    logger.error({ queue: worker.name }, 'a job ignored the abort; it is left to the stalled-job check');
    return 'abandoned';
  }
}

/**
 * Runs `work` for `job`; if `signal` aborts first (shutdown deadline), moves the job back to waiting
 * and throws BullMQ's `WaitingError`, which tells the worker the job was handed back, not failed. Work
 * that reacts to the abort by returning early was cut short all the same, so its job goes back too.
 */
export async function returnJobOnAbort<T>(job: Job, token: string | undefined, signal: AbortSignal | undefined, work: Promise<T>): Promise<T> {
  if (!signal) return work;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  let outcome: { value: T } | { error: unknown } | 'aborted';
  try {
    outcome = await Promise.race([work.then((value) => ({ value }), (error: unknown) => ({ error })), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
  if (signal.aborted) {
    await job.moveToWait(token);
    throw new WaitingError();
  }
  if (outcome === 'aborted') throw new Error('unreachable: aborted without an aborted signal');
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}
