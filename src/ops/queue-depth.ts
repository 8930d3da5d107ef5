/**
 * The queue-depth gauge `storesync_queue_jobs{queue,state}`, read from Redis at scrape time. While
 * Redis is down the scrape still answers (Metrics.render waits a bounded time) and the gauge keeps its
 * last values, their age in `storesync_redis_gauges_age_seconds`.
 */
import type { Queue } from 'bullmq';

import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';

/** The states the gauge reports, always all of them so that a state at zero is a 0, not a gap. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/** Registers the collector on `metrics`; returns a function that removes it. */
export function collectQueueDepth(metrics: Metrics, queues: readonly Queue[], options: { logger: Logger }): () => void {
  return metrics.addCollector(async () => {
    await Promise.all(
      queues.map(async (queue) => {
        try {
          const counts = await queue.getJobCounts(...QUEUE_STATES);
          for (const state of QUEUE_STATES) metrics.queueJobs.set({ queue: queue.name, state }, counts[state] ?? 0);
        } catch (error) {
          options.logger.debug({ queue: queue.name, err: error }, 'queue depth not read');
          throw error;
        }
      }),
    );
  });
}
