import { randomUUID } from 'node:crypto';

import type { Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import type { SourceConfig } from '../../src/config/schema.js';
import type { ChangeSource } from '../../src/erp/types.js';
import { silentLogger } from '../../src/log.js';
import { createRedis } from '../../src/queue/connection.js';
import { type FlowPlan, type LifecycleRuntime, startFlow } from '../../src/sync/lifecycle.js';
import { deleteKeys } from '../support/redis.js';

const REDIS_URL = 'redis://127.0.0.1:6379/0';
const prefix = `test-${randomUUID()}`;
const admin = createRedis(REDIS_URL);
const config = loadConfig({ env: {}, overrides: { redis: { url: REDIS_URL, prefix }, log: { level: 'silent' } } });

afterAll(async () => {
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

/** A plan whose parts record when they open and close, failing at the step named by `failAt`. */
function recordingPlan(role: 'all' | 'producer' | 'worker', failAt?: 'source b' | 'check' | 'schedule') {
  const events: string[] = [];
  const sourceConfig = (name: string, schedule = '0 0 0 1 1 *') => ({ name, schedule, limit: 10, initialCursor: null }) as unknown as SourceConfig;
  const plan: FlowPlan<LifecycleRuntime> = {
    role,
    openRuntime: () => {
      events.push('open runtime');
      const redis = createRedis(REDIS_URL);
      return {
        config,
        logger: silentLogger(),
        redis,
        connect: () => {
          events.push('open connection');
          return createRedis(REDIS_URL);
        },
        async close() {
          events.push('close runtime');
          await redis.quit();
        },
      };
    },
    sources: {
      configs: [sourceConfig('a'), sourceConfig('b', failAt === 'schedule' ? 'not a cron' : undefined)],
      open: (source) => {
        if (failAt === 'source b' && source.name === 'b') throw new Error('source b: bad mapping');
        events.push(`open source ${source.name}`);
        return { name: source.name, close: async () => void events.push(`close source ${source.name}`) } as unknown as ChangeSource;
      },
    },
    checkWorker: async () => {
      if (failAt === 'check') throw new Error('sink tables missing');
    },
    worker: () => {
      events.push('start worker');
      return { name: 'test', close: async () => void events.push('close worker') } as unknown as Worker;
    },
    schedule: (_rt, sources) => {
      events.push('start schedule');
      return [...sources].map(([name, source]) => ({ name: `test:${prefix}:${name}`, expression: source.schedule ?? '* * * * *', run: async () => undefined }));
    },
  };
  return { plan, events };
}

describe('startFlow', () => {
  it('opens runtime, sources, worker, schedule in that order and closes them in reverse', async () => {
    const { plan, events } = recordingPlan('all');
    const flow = await startFlow(plan);
    expect([...flow.sources.keys()]).toEqual(['a', 'b']);
    expect(flow.workers).toHaveLength(1);
    await flow.close();
    await flow.close();
    expect(events).toEqual([
      'open runtime',
      'open source a',
      'open source b',
      'open connection',
      'start worker',
      'start schedule',
      'close worker',
      'close source b',
      'close source a',
      'close runtime',
    ]);
  });

  it('opens no sources or schedule in the worker role and no worker in the producer role', async () => {
    const worker = recordingPlan('worker');
    await (await startFlow(worker.plan)).close();
    expect(worker.events).toEqual(['open runtime', 'open connection', 'start worker', 'close worker', 'close runtime']);
    const producer = recordingPlan('producer');
    await (await startFlow(producer.plan)).close();
    expect(producer.events).toEqual(['open runtime', 'open source a', 'open source b', 'start schedule', 'close source b', 'close source a', 'close runtime']);
  });

  it.each([
    ['a source fails to open', 'source b', ['open runtime', 'open source a', 'close source a', 'close runtime']],
    ['the worker check fails', 'check', ['open runtime', 'open source a', 'open source b', 'close source b', 'close source a', 'close runtime']],
    [
      'the schedule fails to start',
      'schedule',
      ['open runtime', 'open source a', 'open source b', 'open connection', 'start worker', 'start schedule', 'close worker', 'close source b', 'close source a', 'close runtime'],
    ],
  ] as const)('releases everything opened so far, in reverse, when %s', async (_what, failAt, expected) => {
    const { plan, events } = recordingPlan('all', failAt);
    await expect(startFlow(plan)).rejects.toThrow(failAt === 'schedule' ? 'is not a cron expression' : failAt === 'check' ? 'sink tables missing' : 'bad mapping');
    expect(events).toEqual(expected);
  });
});
