/**
 * The control worker: validates a control job and runs the action it names, one job at a time (two
 * reconciles at once would only compete for the same store). Invalid data fails the job at once
 * (`UnrecoverableError`) with the field named; the action's report is the job's return value.
 */
import type { Job, KeepJobs } from 'bullmq';
import type { Redis } from 'ioredis';

import { formatIssue } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics.js';
import { UnrecoverableError, Worker } from '../../queue/bullmq-parts.js';
import { willRetry } from '../../queue/job-retry.js';
import { returnJobOnAbort } from '../../queue/worker-shutdown.js';
import { maskSecrets } from '../../secrets.js';
import type { ControlActions } from './actions.js';
import { type ControlJobData, parseControlJob } from './job-data.js';

/** What the control worker needs. */
export interface ControlWorkerOptions {
  connection: Redis;
  prefix: string;
  queueName: string;
  actions: ControlActions;
  logger: Logger;
  metrics: Metrics;
  removeOnComplete: KeepJobs;
  removeOnFail: KeepJobs;
  now?: () => number;
}

/** Creates the worker; it starts consuming at once. */
export function createControlWorker(options: ControlWorkerOptions): Worker {
  const { actions, logger, metrics, queueName } = options;
  const now = options.now ?? Date.now;

  const run = (job: Job, data: ControlJobData, signal: AbortSignal): Promise<unknown> => {
    if (data.action === 'sales-pull') return actions.pullSales({ from: data.from, to: data.to, dryRun: data.dryRun, signal });
    return actions.reconcile({
      skus: data.skus,
      ...(data.source === undefined ? {} : { source: data.source }),
      dryRun: data.dryRun,
      force: data.force,
      confirmOrphans: data.confirmOrphans,
      signal,
      onProgress: (progress) => {
        job.updateProgress(progress).catch(() => undefined);
      },
    });
  };

  const worker = new Worker(
    queueName,
    async (job: Job, token?: string, signal?: AbortSignal) => {
      const parsed = parseControlJob(job.data);
      if (!parsed.ok) {
        metrics.jobs.inc({ queue: queueName, outcome: 'rejected' });
        throw new UnrecoverableError(`invalid control job: ${parsed.issues.map(formatIssue).join('; ')}`);
      }
      const data = parsed.value;
      const started = now();
      const controller = new AbortController();
      signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
      logger.info({ jobId: job.id, job: job.name, action: data.action, requestedBy: data.requestedBy }, 'control job started');
      try {
        const report = await returnJobOnAbort(job, token, signal, run(job, data, controller.signal));
        metrics.jobs.inc({ queue: queueName, outcome: 'completed' });
        logger.info({ jobId: job.id, action: data.action, ms: now() - started }, 'control job done');
        // The report is stored in Redis and shown on the dashboard.
        return maskSecrets(report);
      } catch (error) {
        if (!(error instanceof Error && error.name === 'WaitingError')) {
          const last = !willRetry(job, error);
          metrics.jobs.inc({ queue: queueName, outcome: last ? 'failed' : 'retried' });
          logger.warn({ jobId: job.id, action: data.action, err: error }, 'control job failed');
        }
        throw error;
      } finally {
        metrics.jobDuration.observe({ queue: queueName }, (now() - started) / 1000);
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: 1,
      removeOnComplete: options.removeOnComplete,
      removeOnFail: options.removeOnFail,
    },
  );
  // Connection errors repeat while Redis is down; the daemon's Redis monitor reports the outage once.
  worker.on('error', (error) => logger.debug({ err: error }, 'control worker error'));
  return worker;
}
