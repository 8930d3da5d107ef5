/**
 * The `fulfillment` queue's worker: applies each shipment update through the guard. Retries are
 * BullMQ's (the store client is called with one attempt); refusals fail at once with their reason.
 */
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';

import { ValidationError } from '../../errors.js';
import { WaitingError, Worker } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import { syncWorkerOptions } from '../../queue/crash-recovery.js';
import { willRetry } from '../../queue/job-retry.js';
import { MANUAL_RATE_LIMIT } from '../../queue/manual-rate-limit.js';
import { returnJobOnAbort } from '../../queue/worker-shutdown.js';
import { holdForCredentials, toJobError } from '../job-errors.js';
import { applyFulfillment } from './apply-update.js';
import type { FulfillmentRuntime } from './runtime.js';
import type { FulfillmentJobData, FulfillmentResult } from './types.js';

const QUEUE = QUEUE_NAMES.fulfillment;

/** Processes one job; exposed for tests that drive a job by hand. */
export async function processFulfillmentJob(
  rt: FulfillmentRuntime,
  job: Job<FulfillmentJobData>,
  token?: string,
  signal?: AbortSignal,
): Promise<FulfillmentResult> {
  const started = rt.now();
  try {
    const result = await returnJobOnAbort(job, token, signal, applyFulfillment(rt, job.data, { attempts: 1 }));
    rt.metrics.jobs.inc({ queue: QUEUE, outcome: result.outcome === 'updated' ? 'completed' : 'skipped' });
    rt.events.emit('fulfillment:job:done', result);
    return result;
  } catch (error) {
    if (error instanceof WaitingError) throw error;
    const held = await holdForCredentials(rt.queue, error);
    if (held) {
      rt.metrics.jobs.inc({ queue: QUEUE, outcome: 'auth_paused' });
      rt.events.emit('fulfillment:job:held', { saleId: job.data.saleId });
      throw held;
    }
    const err = toJobError(error);
    const retrying = willRetry(job, err);
    // Refusals are counted (as rejected) and logged where they are decided.
    if (!(error instanceof ValidationError)) {
      rt.metrics.jobs.inc({ queue: QUEUE, outcome: retrying ? 'retried' : 'failed' });
      // The activity log warns of an update that fails for good and counts the retries.
      rt.logger.debug({ saleId: job.data.saleId, attempt: job.attemptsMade + 1, err: err.message }, 'shipment update failed');
    }
    rt.events.emit('fulfillment:job:failed', { saleId: job.data.saleId, error: err, willRetry: retrying });
    throw err;
  } finally {
    rt.metrics.jobDuration.observe({ queue: QUEUE }, (rt.now() - started) / 1000);
  }
}

/** Starts the worker on its own connection. */
export function startFulfillmentWorker(rt: FulfillmentRuntime, connection: Redis): Worker<FulfillmentJobData, FulfillmentResult> {
  const worker = new Worker<FulfillmentJobData, FulfillmentResult>(QUEUE, (job, token, signal) => processFulfillmentJob(rt, job, token, signal), {
    connection,
    prefix: rt.config.redis.prefix,
    concurrency: rt.config.fulfillment.concurrency,
    // Lets refused credentials pause the queue (holdForCredentials).
    limiter: MANUAL_RATE_LIMIT,
    ...syncWorkerOptions(rt.instance),
  });
  worker.on('error', (error) => {
    if (!rt.redisErrors?.absorb('fulfillment', error)) rt.logger.error({ err: error.message }, 'fulfillment worker error');
  });
  return worker;
}
