import { randomUUID } from 'node:crypto';

import { createTask } from 'node-cron';
import { afterAll, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import { RedisRunCoordinator } from '../../src/queue/run-coordinator.js';
import { deleteKeys, waitFor } from './redis-helpers.js';

const prefix = `test-${randomUUID()}`;
const redis = createRedis('redis://127.0.0.1:6379/0');

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('RedisRunCoordinator', () => {
  it('elects exactly one of two instances for the same task and fire time', async () => {
    const a = new RedisRunCoordinator({ redis, prefix, owner: 'a' });
    const b = new RedisRunCoordinator({ redis, prefix, owner: 'b' });
    const key = 'poll:erp:2025-01-01T00:00:00.000Z';
    const results = await Promise.all([a.shouldRun(key, 1000), b.shouldRun(key, 1000)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await a.shouldRun('poll:erp:2025-01-01T00:00:01.000Z', 1000)).toBe(true);
  });

  it('keeps the lock after the run so a late instance does not repeat the tick', async () => {
    const a = new RedisRunCoordinator({ redis, prefix, owner: 'a' });
    const b = new RedisRunCoordinator({ redis, prefix, owner: 'b' });
    const key = 'reconcile:2025-01-01T00:00:00.000Z';
    expect(await a.shouldRun(key, 10)).toBe(true);
    expect(await b.shouldRun(key, 10)).toBe(false);
  });

  it('runs each tick of two distributed node-cron tasks once in total', async () => {
    const name = `tick-${randomUUID()}`;
    const runs: string[] = [];
    const tasks = ['a', 'b'].map((owner) =>
      createTask('* * * * * *', (ctx) => void runs.push(`${owner}@${ctx.date.toISOString()}`), {
        name,
        distributed: true,
        runCoordinator: new RedisRunCoordinator({ redis, prefix, owner }),
      }),
    );
    await Promise.all(tasks.map((task) => task.start()));
    try {
      await waitFor(() => runs.length >= 2, { timeoutMs: 5000 });
    } finally {
      await Promise.all(tasks.map((task) => task.destroy()));
    }
    const ticks = runs.map((run) => run.split('@')[1]);
    expect(new Set(ticks).size).toBe(ticks.length);
  });
});
