import { randomUUID } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { createLogger } from '../../src/log.js';
import { createRedis } from '../../src/queue/connection.js';
import { startSchedule } from '../../src/queue/schedule.js';
import { deleteKeys, waitFor } from './redis-helpers.js';

const redis = createRedis('redis://127.0.0.1:6379/0');
const prefix = `test-${randomUUID()}`;

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe('startSchedule', () => {
  it('never runs a task on two instances at once when a run outlasts its interval', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } });
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const task = {
      name: 'slow-poll',
      expression: '*/1 * * * * *',
      run: async () => {
        runs += 1;
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await released;
        running -= 1;
      },
    };
    // Two instances: each tick is elected once, and the run lock keeps the next tick's winner out.
    const a = await startSchedule(redis, prefix, [task], logger);
    const b = await startSchedule(redis, prefix, [task], logger);
    try {
      await waitFor(() => lines.some((line) => line.includes('the previous run is still going on another instance')) || null, {
        message: 'a skipped tick',
      });
      expect(runs).toBe(1);
      release();
      await waitFor(() => runs >= 2 || null, { message: 'a run after the lock was released' });
      expect(maxRunning).toBe(1);
    } finally {
      release();
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('logs a run that throws instead of leaving an unhandled rejection', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'error', destination: { write: (line: string) => lines.push(line) } });
    const schedule = await startSchedule(
      redis,
      prefix,
      [{ name: 'throws', expression: '*/1 * * * * *', run: () => Promise.reject(new Error('source exploded')) }],
      logger,
    );
    try {
      await waitFor(() => lines.some((line) => line.includes('source exploded')) || null, { message: 'the logged failure' });
    } finally {
      await schedule.stop();
    }
  });
});
