/**
 * A node-cron task that runs on one daemon instance per tick (the shared Redis RunCoordinator) and
 * never overlaps itself, and that can be stopped while waiting for the run in progress to end.
 * Used by the sales pull and the fulfilment polls.
 */
import { randomUUID } from 'node:crypto';

import type { Redis } from 'ioredis';
import cron from 'node-cron';

import type { Logger } from '../../log.js';
import { RedisRunCoordinator } from '../../queue/run-coordinator.js';

/** A scheduled task. */
export interface ScheduledRun {
  /** Stops scheduling and waits for a run in progress. */
  stop(): Promise<void>;
}

/** Options of `scheduleExclusive`. */
export interface ScheduleOptions {
  /** Unique task name: it keys the election in Redis. */
  name: string;
  schedule: string;
  redis: Redis;
  prefix: string;
  logger: Logger;
}

/** Schedules `run`; its errors are the caller's to report (they are only logged here as a last resort). */
export function scheduleExclusive(options: ScheduleOptions, run: () => Promise<void>): ScheduledRun {
  let running: Promise<void> | undefined;
  const task = cron.schedule(
    options.schedule,
    async () => {
      running = run().catch((error: unknown) => {
        options.logger.error({ task: options.name, err: (error as Error).message }, 'scheduled run failed');
      });
      await running;
      running = undefined;
    },
    {
      name: options.name,
      noOverlap: true,
      distributed: true,
      runCoordinator: new RedisRunCoordinator({ redis: options.redis, prefix: options.prefix, owner: randomUUID() }),
    },
  );
  return {
    async stop() {
      await task.destroy();
      await running;
    },
  };
}
