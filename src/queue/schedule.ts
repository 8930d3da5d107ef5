/**
 * The producers' cron tasks (node-cron v4), shared by every flow. Each task is `distributed` through a
 * Redis run coordinator, so with several daemon instances each tick runs on one of them; `noOverlap`
 * keeps a slow run from stacking with the next tick on the same instance; and a Redis run lock keeps
 * it from overlapping a run still going on another instance (a poll slower than its interval).
 * Stopping waits for the runs in flight.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import type { Redis } from 'ioredis';
import { createTask, type ScheduledTask } from 'node-cron';

import type { Logger } from '../log.js';
import { stateKey } from './connection.js';
import { RedisRunCoordinator } from './run-coordinator.js';

/** How long a run lock lives without renewal; it is renewed while the run goes on. */
const RUN_LOCK_MS = 60_000;

/** One scheduled task: `run` gets a signal aborted when the schedule stops. */
export interface ScheduledRun {
  /** Unique across instances (it keys the coordination locks): `inventory:poll:erp`. */
  name: string;
  expression: string;
  run: (signal: AbortSignal) => Promise<void>;
}

/** Running cron tasks. */
export interface Schedule {
  /** Stops the tasks, aborts and awaits the runs in flight. */
  stop(): Promise<void>;
}

/** Deletes the lock only if it is still ours. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** Extends the lock only if it is still ours. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

/** Runs `fn` under a Redis lock named `name`, or skips it (returns false) when another instance holds it. */
async function withRunLock(redis: Redis, key: string, owner: string, fn: () => Promise<void>): Promise<boolean> {
  if ((await redis.set(key, owner, 'PX', RUN_LOCK_MS, 'NX')) !== 'OK') return false;
  const renew = setInterval(() => void redis.eval(RENEW, 1, key, owner, RUN_LOCK_MS).catch(() => undefined), RUN_LOCK_MS / 3);
  try {
    await fn();
  } finally {
    clearInterval(renew);
    await redis.eval(RELEASE, 1, key, owner).catch(() => undefined);
  }
  return true;
}

/**
 * Starts one cron task per entry. A run's errors are the caller's to report; one that escapes is
 * logged here as a last resort so that it never becomes an unhandled rejection.
 */
export async function startSchedule(redis: Redis, prefix: string, runs: readonly ScheduledRun[], logger: Logger): Promise<Schedule> {
  const owner = `${hostname()}:${randomUUID()}`;
  const coordinator = new RedisRunCoordinator({ redis, prefix, owner });
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const tasks: ScheduledTask[] = [];
  try {
    for (const { name, expression, run } of runs) {
      const execute = (): Promise<void> => {
        const running = withRunLock(redis, stateKey(prefix, 'cron-running', name), owner, () => run(stopping.signal))
          .then((ran) => {
            if (!ran) logger.debug({ task: name }, 'skipped a tick: the previous run is still going on another instance');
          })
          .catch((error: unknown) => logger.error({ task: name, err: (error as Error).message }, 'scheduled run failed'))
          .finally(() => inFlight.delete(running));
        inFlight.add(running);
        return running;
      };
      tasks.push(createTask(expression, execute, { name, noOverlap: true, distributed: true, runCoordinator: coordinator }));
    }
    await Promise.all(tasks.map((task) => task.start()));
  } catch (error) {
    // An invalid expression: no task of this schedule is left registered.
    await Promise.all(tasks.map((task) => task.destroy()));
    throw error;
  }
  return {
    async stop() {
      await Promise.all(tasks.map((task) => task.destroy()));
      stopping.abort();
      await Promise.allSettled([...inFlight]);
    },
  };
}
