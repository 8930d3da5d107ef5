/**
 * The one lifecycle of every flow. Starting opens, in this order: the runtime (its Redis connection,
 * queues and state), the sources this instance polls (producer roles), the worker on its own
 * connection (worker roles), and last the schedule, so that no tick fires before the rest is up.
 * Stopping closes the same things in the reverse order: the schedule first (no new poll while the
 * workers drain), then the workers within the shutdown timeout, the sources, the runtime. When a step
 * of the start fails, whatever was opened before it is closed the same way and the error is rethrown,
 * so a failed start leaves no connection, source or cron task behind.
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Config, SourceConfig } from '../config/schema.js';
import type { ChangeSource, Cursor } from '../erp/types.js';
import type { Logger } from '../log.js';
import { type Schedule, type ScheduledRun, startSchedule } from '../queue/schedule.js';
import { closeWorkerWithin } from '../queue/worker-shutdown.js';
import type { Role } from './flow.js';
import { closeConnection } from './runtime.js';

/** What the lifecycle needs of a flow's runtime. */
export interface LifecycleRuntime {
  readonly config: Readonly<Config>;
  readonly logger: Logger;
  /** The runtime's own connection; the schedule coordinates its ticks on it. */
  readonly redis: Redis;
  /** Opens a new connection (a BullMQ worker needs its own). */
  readonly connect: () => Redis;
  close(): Promise<void>;
}

/** A source this instance polls, with how to poll it. */
export interface PolledSource {
  readonly source: ChangeSource;
  readonly limit: number;
  /** Cursor of a source never polled before; CSV sources have none: they read whatever files are in their folder. */
  readonly initialCursor: Cursor;
  /** The source's cron expression; none for an inventory source polled only by its snapshot diff. */
  readonly schedule: string | undefined;
}

/** What a flow is made of; each part is optional, and each runs only in the roles it belongs to. */
export interface FlowPlan<R extends LifecycleRuntime> {
  role: Role;
  /** Opens the runtime. */
  openRuntime(): R;
  /** Producer roles: the enabled sources this instance polls, and how to open one. */
  sources?: { configs: readonly SourceConfig[]; open(config: SourceConfig, rt: R): ChangeSource };
  /** Worker roles: what must hold before the worker starts (the sales sink's tables). */
  checkWorker?(rt: R): Promise<void>;
  /** Worker roles: the worker, on the connection the lifecycle opened for it. */
  worker?(rt: R, connection: Redis): Worker;
  /** Producer roles: the scheduled runs, given the opened sources. */
  schedule?(rt: R, sources: ReadonlyMap<string, PolledSource>): ScheduledRun[];
}

/** A started flow's parts and how to stop them. */
export interface StartedFlow<R> {
  readonly rt: R;
  /** The sources this instance polls, by name (none in the worker role). */
  readonly sources: ReadonlyMap<string, PolledSource>;
  /** The flow's BullMQ workers in this process (none in the producer role). */
  readonly workers: readonly Worker[];
  /** The outcome of each cron tick on this instance, with the tick's own fire time (none without scheduled runs). */
  readonly ticks?: Schedule['events'];
  /** Stops everything in reverse order; the workers get `timeoutMs` to finish their jobs. Safe to call twice. */
  close(timeoutMs?: number): Promise<void>;
}

type Closer = (timeoutMs: number) => Promise<unknown>;

/** Starts a flow as `plan` says; see the module comment for the order. */
export async function startFlow<R extends LifecycleRuntime>(plan: FlowPlan<R>): Promise<StartedFlow<R>> {
  const producing = plan.role !== 'worker';
  const working = plan.role !== 'producer';
  const rt = plan.openRuntime();
  const opened: Closer[] = [() => rt.close()];
  const closeOpened = async (timeoutMs: number): Promise<void> => {
    let first: unknown;
    // Everything is closed even when one part fails to; the first failure is reported.
    for (let close = opened.pop(); close; close = opened.pop()) {
      try {
        await close(timeoutMs);
      } catch (error) {
        first ??= error;
        rt.logger.warn({ err: (error as Error).message }, 'a part of the flow did not close cleanly');
      }
    }
    if (first !== undefined) throw first;
  };

  const timeoutDefault = rt.config.shutdown.timeoutMs;
  try {
    const sources = new Map<string, PolledSource>();
    const sourcePlan = plan.sources;
    if (producing && sourcePlan) {
      for (const config of sourcePlan.configs) {
        const source = sourcePlan.open(config, rt);
        opened.push(() => source.close());
        sources.set(config.name, {
          source,
          limit: config.limit,
          initialCursor: 'initialCursor' in config ? config.initialCursor : null,
          schedule: config.schedule,
        });
      }
    }
    const workers: Worker[] = [];
    if (working && plan.worker) {
      await plan.checkWorker?.(rt);
      const connection = rt.connect();
      opened.push(() => closeConnection(connection));
      const worker = plan.worker(rt, connection);
      workers.push(worker);
      opened.push((timeoutMs) => closeWorkerWithin(worker, timeoutMs, rt.logger));
    }
    const runs = producing ? (plan.schedule?.(rt, sources) ?? []) : [];
    let ticks: Schedule['events'] | undefined;
    if (runs.length > 0) {
      const schedule = await startSchedule(rt.redis, rt.config.redis.prefix, runs, rt.logger);
      opened.push(() => schedule.stop());
      ticks = schedule.events;
    }
    return { rt, sources, workers, ...(ticks ? { ticks } : {}), close: (timeoutMs = timeoutDefault) => closeOpened(timeoutMs) };
  } catch (error) {
    await closeOpened(timeoutDefault).catch(() => undefined);
    throw error;
  }
}

/**
 * One scheduled poll per source, named `{flow}:poll:{source}`. A failed poll did not move its cursor
 * (the next tick reads the same rows again); `onFailed` reports it.
 */
export function pollRuns(
  flow: string,
  sources: ReadonlyMap<string, PolledSource>,
  poll: (source: string) => Promise<unknown>,
  onFailed: (source: string, error: Error) => void,
): ScheduledRun[] {
  return [...sources].flatMap(([name, { schedule }]) => (schedule === undefined ? [] : [{ name, schedule }])).map(({ name, schedule }) => ({
    name: `${flow}:poll:${name}`,
    expression: schedule,
    run: () =>
      poll(name).then(
        () => undefined,
        (error: Error) => onFailed(name, error),
      ),
  }));
}

/** The polled source named `name`, or an error saying this instance does not poll it. */
export function polledSource(flow: string, sources: ReadonlyMap<string, PolledSource>, name: string): PolledSource {
  const entry = sources.get(name);
  if (!entry) throw new Error(`${flow} source "${name}" is not polled by this instance`);
  return entry;
}

/**
 * Runs the polls of each source one after another on this instance. The tick lock keeps scheduled
 * polls from overlapping, but a poll asked for by hand (the CLI, the demo, an admin) can meet a
 * scheduled one of the same source: both would read the same rows and commit them (a CSV source would
 * move the same file twice). The second waits for the first and then reads what is left.
 */
export function onePollAtATime(): <T>(source: string, poll: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<void>>();
  return (source, poll) => {
    const next = (tails.get(source) ?? Promise.resolve()).then(poll);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    tails.set(source, tail);
    void tail.then(() => {
      if (tails.get(source) === tail) tails.delete(source);
    });
    return next;
  };
}
