import { randomUUID } from 'node:crypto';

import { afterAll, describe, expect, it, vi } from 'vitest';

import { createLogger, silentLogger } from '../../src/log.js';
import { createRedis } from '../../src/queue/connection.js';
import { type ScheduledRun, startSchedule, type TickOutcome } from '../../src/queue/schedule.js';
import { RUN_LEASE_MS } from '../../src/queue/tick-lock.js';
import { deleteKeys } from '../support/redis.js';

const redis = createRedis('redis://127.0.0.1:6379/0');
const prefix = `test-${randomUUID()}`;
/** A cron expression that never fires during a test (midnight of January 1st): ticks are fired by hand. */
const NEVER = '0 0 0 1 1 *';
const T0 = Date.UTC(2030, 0, 1);

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/**
 * A task whose runs wait until released, counting how many run at once. A run that starts while another is
 * going fails at once instead of waiting (its tick would otherwise hang the test until its timeout).
 */
function slowTask(name: string) {
  const state = { runs: 0, running: 0, maxRunning: 0, release: (): void => undefined, started: Promise.resolve() };
  let gate = Promise.resolve();
  let onStart = (): void => undefined;
  const arm = () => {
    gate = new Promise<void>((resolve) => (state.release = resolve));
    state.started = new Promise<void>((resolve) => (onStart = resolve));
  };
  arm();
  const task: ScheduledRun = {
    name,
    expression: NEVER,
    run: async () => {
      state.runs += 1;
      state.maxRunning = Math.max(state.maxRunning, state.running + 1);
      if (state.running > 0) throw new Error(`run ${state.runs} started while ${state.running} run(s) of ${name} were still going`);
      state.running += 1;
      onStart();
      await gate;
      state.running -= 1;
    },
  };
  return { task, state, arm };
}

/** A tick's outcome with its error's message, which a failed diff then shows. */
const summary = ({ outcome, error }: TickOutcome) => ({ outcome, ...(error ? { error: error.message } : {}) });

/** Resolves when `tick`'s run has started; rejects at once, naming the outcome, if the tick ends without running. */
async function runStarted(tick: Promise<TickOutcome>, started: Promise<void>): Promise<void> {
  const endedFirst = tick.then(({ outcome, error }) => {
    throw new Error(`the tick ended as "${outcome}"${error ? ` (${error.message})` : ''} without its run starting`);
  });
  await Promise.race([started, endedFirst]);
}

describe('startSchedule', () => {
  it('runs a tick fired on two instances on exactly one of them', async () => {
    let runs = 0;
    const task: ScheduledRun = { name: `once-${randomUUID()}`, expression: NEVER, run: async () => void (runs += 1) };
    const a = await startSchedule(redis, prefix, [task], silentLogger());
    const b = await startSchedule(redis, prefix, [task], silentLogger());
    try {
      const outcomes = await Promise.all([a.fire(task.name, T0), b.fire(task.name, T0)]);
      expect(outcomes.map((o) => o.outcome).sort()).toEqual(['claimed', 'ran']);
      expect(runs).toBe(1);
      // An instance whose clock lags reaches the same tick after the run ended: it does not repeat it.
      expect((await b.fire(task.name, T0)).outcome).toBe('claimed');
      expect(runs).toBe(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('skips the next ticks on every instance while a slow run goes on, and runs again once it ended', async () => {
    const { task, state, arm } = slowTask(`slow-${randomUUID()}`);
    const a = await startSchedule(redis, prefix, [task], silentLogger());
    const b = await startSchedule(redis, prefix, [task], silentLogger());
    try {
      const first = a.fire(task.name, T0);
      await runStarted(first, state.started);
      expect(summary(await b.fire(task.name, T0 + 1000))).toEqual({ outcome: 'busy' });
      expect(summary(await a.fire(task.name, T0 + 2000))).toEqual({ outcome: 'busy' });
      state.release();
      expect(await first).toMatchObject({ outcome: 'ran', fireTime: T0 });
      arm();
      const next = b.fire(task.name, T0 + 3000);
      await runStarted(next, state.started);
      state.release();
      expect(await next).toMatchObject({ outcome: 'ran' });
      expect(state).toMatchObject({ runs: 2, maxRunning: 1 });
    } finally {
      state.release();
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('takes over a run lock of its own that Redis brought back (a release lost in a failover) instead of skipping ticks until the lease ends', async () => {
    const { task, state, arm } = slowTask(`lost-release-${randomUUID()}`);
    const runKey = `${prefix}:state:cron:run:${task.name}`;
    const a = await startSchedule(redis, prefix, [task], silentLogger());
    const b = await startSchedule(redis, prefix, [task], silentLogger());
    try {
      const first = a.fire(task.name, T0);
      await runStarted(first, state.started);
      const holder = await redis.get(runKey);
      expect(holder).not.toBeNull();
      // While the run goes on, its own instance skips the next tick as every other one does.
      expect(summary(await a.fire(task.name, T0 + 1000))).toEqual({ outcome: 'busy' });
      state.release();
      expect(await first).toMatchObject({ outcome: 'ran' });
      // The release is lost: the lock is back as it was during the run.
      await redis.set(runKey, holder!, 'PX', RUN_LEASE_MS);
      expect(summary(await b.fire(task.name, T0 + 2000))).toEqual({ outcome: 'busy' });
      arm();
      const next = a.fire(task.name, T0 + 3000);
      await runStarted(next, state.started);
      state.release();
      expect(await next).toMatchObject({ outcome: 'ran' });
      expect(state).toMatchObject({ runs: 2, maxRunning: 1 });
      expect(await redis.get(runKey)).toBeNull();
    } finally {
      state.release();
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('renews its run lock while a run outlasts a third of the lease, so no other instance takes it', async () => {
    const { task, state } = slowTask(`lease-${randomUUID()}`);
    const runKey = `${prefix}:state:cron:run:${task.name}`;
    const a = await startSchedule(redis, prefix, [task], silentLogger());
    // Only the renewal's interval is faked: the lease itself runs down in Redis, on Redis's clock.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const first = a.fire(task.name, T0);
      await runStarted(first, state.started);
      // The lease as if the run had gone on for most of it.
      await redis.pexpire(runKey, 5_000);
      await vi.advanceTimersByTimeAsync(RUN_LEASE_MS / 3);
      // The renewal went out on this connection before this read, so the read sees it.
      const ttl = await redis.pttl(runKey);
      expect(ttl, 'the run lock\'s lease (ms) one renewal period later').toBeGreaterThan(RUN_LEASE_MS - 5_000);
      state.release();
      expect(await first).toMatchObject({ outcome: 'ran' });
    } finally {
      vi.useRealTimers();
      state.release();
      await a.stop();
    }
  });

  it('fires on its cron expression, naming the tick by its scheduled time', async () => {
    let runs = 0;
    const schedule = await startSchedule(redis, prefix, [{ name: `cron-${randomUUID()}`, expression: '* * * * * *', run: async () => void (runs += 1) }], silentLogger());
    try {
      const tick = await schedule.events.next('schedule:tick');
      expect(tick.outcome).toBe('ran');
      expect(tick.fireTime % 1000).toBe(0);
      expect(runs).toBeGreaterThanOrEqual(1);
    } finally {
      await schedule.stop();
    }
  });

  it('logs a run that throws instead of leaving an unhandled rejection, and releases its lock', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'error', destination: { write: (line: string) => lines.push(line) } });
    const name = `throws-${randomUUID()}`;
    const schedule = await startSchedule(redis, prefix, [{ name, expression: NEVER, run: () => Promise.reject(new Error('source exploded')) }], logger);
    try {
      const outcome = await schedule.fire(name, T0);
      expect(outcome.outcome).toBe('failed');
      expect(outcome.error?.message).toBe('source exploded');
      expect(lines.some((line) => line.includes('source exploded'))).toBe(true);
      expect(await redis.exists(`${prefix}:state:cron:run:${name}`)).toBe(0);
      expect((await schedule.fire(name, T0 + 1000)).outcome).toBe('failed');
    } finally {
      await schedule.stop();
    }
  });

  it('aborts and awaits the run in flight when stopped', async () => {
    const name = `stop-${randomUUID()}`;
    let sawAbort = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const schedule = await startSchedule(
      redis,
      prefix,
      [
        {
          name,
          expression: NEVER,
          run: (signal) =>
            new Promise<void>((resolve) => {
              started();
              signal.addEventListener('abort', () => {
                sawAbort = true;
                resolve();
              });
            }),
        },
      ],
      silentLogger(),
    );
    const tick = schedule.fire(name, T0);
    await running;
    await schedule.stop();
    expect(sawAbort).toBe(true);
    expect(await tick).toMatchObject({ outcome: 'ran' });
    expect(await redis.exists(`${prefix}:state:cron:run:${name}`)).toBe(0);
  });

  it('rejects an invalid cron expression', async () => {
    await expect(startSchedule(redis, prefix, [{ name: 'bad', expression: 'every minute', run: async () => undefined }], silentLogger())).rejects.toThrow(
      'scheduled task bad: "every minute" is not a cron expression',
    );
  });
});
