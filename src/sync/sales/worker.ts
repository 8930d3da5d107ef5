/**
 * The `sales` queue's worker: runs export-then-acknowledge for each job. Retries are BullMQ's (the
 * store client is called with one attempt), so a failing ERP or store backs off per `sales.attempts`
 * and `sales.backoffMs` and ends as a failed job that can be retried from the dashboard.
 */
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';

import { UnrecoverableError, WaitingError, Worker } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import { syncWorkerOptions } from '../../queue/crash-recovery.js';
import { willRetry } from '../../queue/job-retry.js';
import { MANUAL_RATE_LIMIT } from '../../queue/manual-rate-limit.js';
import { returnJobOnAbort } from '../../queue/worker-shutdown.js';
import { holdForCredentials, toJobError } from '../job-errors.js';
import { exportSale } from './export-sale.js';
import type { SalesRuntime } from './runtime.js';
import type { SaleOutcome, SalesJobData } from './types.js';

/** Processes one job; exposed for tests that drive a job by hand. */
export async function processSalesJob(rt: SalesRuntime, job: Job<SalesJobData>, token?: string, signal?: AbortSignal): Promise<SaleOutcome> {
  const key = { siteId: job.data.siteId, saleId: job.data.saleId };
  const started = rt.now();
  try {
    const outcome = await returnJobOnAbort(job, token, signal, exportSale(rt, key, { force: job.data.force ?? false, attempts: 1 }));
    rt.metrics.jobs.inc({ queue: QUEUE_NAMES.sales, outcome: outcome.exported || outcome.acked ? 'completed' : 'skipped' });
    rt.events.emit('sales:job:done', outcome);
    return outcome;
  } catch (error) {
    if (error instanceof WaitingError) throw error;
    const held = await holdForCredentials(rt.queue, error);
    if (held) {
      rt.metrics.jobs.inc({ queue: QUEUE_NAMES.sales, outcome: 'auth_paused' });
      rt.events.emit('sales:job:held', key);
      throw held;
    }
    const err = toJobError(error);
    const retrying = willRetry(job, err);
    rt.metrics.jobs.inc({ queue: QUEUE_NAMES.sales, outcome: retrying ? 'retried' : err instanceof UnrecoverableError ? 'rejected' : 'failed' });
    // The activity log warns of a sale that fails for good and counts the retries.
    rt.logger.debug({ ...key, attempt: job.attemptsMade + 1, err: err.message }, retrying ? 'sale export failed; will retry' : 'sale export failed');
    rt.events.emit('sales:job:failed', { ...key, error: err, willRetry: retrying });
    throw err;
  } finally {
    rt.metrics.jobDuration.observe({ queue: QUEUE_NAMES.sales }, (rt.now() - started) / 1000);
  }
}

/** Starts the worker on its own connection (BullMQ workers block on theirs). */
export function startSalesWorker(rt: SalesRuntime, connection: Redis): Worker<SalesJobData, SaleOutcome> {
  const worker = new Worker<SalesJobData, SaleOutcome>(
    QUEUE_NAMES.sales,
    (job, token, signal) => processSalesJob(rt, job, token, signal),
    // The limiter lets refused credentials pause the queue (holdForCredentials).
    { connection, prefix: rt.config.redis.prefix, concurrency: rt.config.sales.concurrency, limiter: MANUAL_RATE_LIMIT, ...syncWorkerOptions(rt.instance) },
  );
  // Without a listener an error event would crash the process; Redis outages are retried by ioredis and logged once.
  worker.on('error', (error) => {
    if (!rt.redisErrors?.absorb('sales', error)) rt.logger.error({ err: error.message }, 'sales worker error');
  });
  return worker;
}
