/**
 * The producers' scheduled runs, shared by every flow. node-cron (v4) only says when a tick is due on
 * this instance's clock; whether it runs is decided in Redis by the `TickLock` (see tick-lock.ts): each
 * tick runs on one instance, and never while the previous run of the same task is still going on any
 * instance. Stopping aborts and awaits the runs in flight.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import type { Redis } from 'ioredis';
import { createTask, type ScheduledTask } from 'node-cron';

import { TypedEmitter } from '../events.js';
import type { Logger } from '../log.js';
import { RUN_LEASE_MS, TickLock } from './tick-lock.js';

/** One scheduled task: `run` gets a signal aborted when the schedule stops. */
export interface ScheduledRun {
  /** Unique across instances (it keys the coordination in Redis): `inventory:poll:erp`. */
  name: string;
  expression: string;
  run: (signal: AbortSignal) => Promise<void>;
}

/**
 * What became of one tick: `ran` here, `claimed` by another instance, skipped as `busy` (the previous
 * run still going), or `failed` (the run threw, or Redis could not be asked).
 */
export interface TickOutcome {
  task: string;
  /** The tick's own fire time (ms), the same on every instance. */
  fireTime: number;
  outcome: 'ran' | 'claimed' | 'busy' | 'failed';
  error?: Error;
}

/** Events of a schedule. */
export interface ScheduleEvents extends Record<string, unknown> {
  'schedule:tick': TickOutcome;
}

/** Running cron tasks. */
export interface Schedule {
  readonly events: TypedEmitter<ScheduleEvents>;
  /** Handles `task`'s tick of `fireTime` now, exactly as its cron firing would; resolves when it is done. */
  fire(task: string, fireTime: number): Promise<TickOutcome>;
  /** Stops the tasks, aborts and awaits the runs in flight. */
  stop(): Promise<void>;
}

/**
 * Starts one cron task per entry. A run's errors are the caller's to report; one that escapes is
 * logged here as a last resort so that it never becomes an unhandled rejection.
 */
export async function startSchedule(redis: Redis, prefix: string, runs: readonly ScheduledRun[], logger: Logger): Promise<Schedule> {
  const lock = new TickLock(redis, prefix, `${hostname()}:${randomUUID()}`);
  const events = new TypedEmitter<ScheduleEvents>();
  const stopping = new AbortController();
  const inFlight = new Set<Promise<TickOutcome>>();
  const byName = new Map(runs.map((entry) => [entry.name, entry]));
  // Tasks with a run going on this instance now (see TickLock.claim's `idleHere`).
  const runningHere = new Set<string>();

  const handle = async ({ name, run }: ScheduledRun, fireTime: number): Promise<TickOutcome> => {
    const outcome = (result: TickOutcome['outcome'], error?: Error): TickOutcome => ({ task: name, fireTime, outcome: result, ...(error ? { error } : {}) });
    let claim;
    try {
      claim = await lock.claim(name, fireTime, !runningHere.has(name));
    } catch (error) {
      logger.error({ task: name, err: (error as Error).message }, 'cannot claim a scheduled tick (Redis); skipped');
      return outcome('failed', error as Error);
    }
    if (claim === 'claimed') return outcome('claimed');
    if (claim === 'busy') {
      logger.debug({ task: name }, 'skipped a tick: the previous run is still going');
      return outcome('busy');
    }
    const renew = setInterval(() => void lock.renew(name).catch(() => undefined), RUN_LEASE_MS / 3);
    runningHere.add(name);
    try {
      await run(stopping.signal);
      return outcome('ran');
    } catch (error) {
      logger.error({ task: name, err: (error as Error).message }, 'scheduled run failed');
      return outcome('failed', error as Error);
    } finally {
      clearInterval(renew);
      await lock.release(name).catch(() => undefined);
      // After the release: a tick in between finds the lock still held, and skips as before.
      runningHere.delete(name);
    }
  };
  const fire = (task: string, fireTime: number): Promise<TickOutcome> => {
    const entry = byName.get(task);
    if (!entry) return Promise.reject(new Error(`no scheduled task "${task}"`));
    const running = handle(entry, fireTime).then((result) => {
      events.emit('schedule:tick', result);
      return result;
    });
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
    return running;
  };

  const tasks: ScheduledTask[] = [];
  try {
    for (const { name, expression } of runs) {
      // The tick's scheduled time names it on every instance, whatever the clocks' drift.
      tasks.push(createTaskNamed(name, expression, (fireTime) => fire(name, fireTime)));
    }
    await Promise.all(tasks.map((task) => task.start()));
  } catch (error) {
    // An invalid expression: no task of this schedule is left registered.
    await Promise.all(tasks.map((task) => task.destroy()));
    throw error;
  }
  return {
    events,
    fire,
    async stop() {
      await Promise.all(tasks.map((task) => task.destroy()));
      stopping.abort();
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** A node-cron task calling `tick` with each tick's scheduled time (not the moment the callback runs). */
function createTaskNamed(name: string, expression: string, tick: (fireTime: number) => Promise<unknown>): ScheduledTask {
  try {
    return createTask(expression, (ctx) => tick(ctx.date.getTime()).then(() => undefined), { name });
  } catch (error) {
    throw new Error(`scheduled task ${name}: "${expression}" is not a cron expression (${(error as Error).message})`, { cause: error });
  }
}
