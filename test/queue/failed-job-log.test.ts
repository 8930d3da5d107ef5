import { randomUUID } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import { FailedJobLog } from '../../src/queue/failed-job-log.js';
import { deleteKeys } from '../support/redis.js';

const prefix = `test-${randomUUID()}`;
const redis = createRedis('redis://127.0.0.1:6379/0');
const removeOnFail = { age: 3600, count: 100 };

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('FailedJobLog', () => {
  it('records each entry as a failed job carrying its own reason and data', async () => {
    const log = new FailedJobLog({ connection: redis, prefix, queueName: 'rejects-a', removeOnFail });
    try {
      await log.record([
        { name: 'reject:A-1', data: { sku: 'A-1' }, reason: 'A-1: field Stock = -1 breaks "0 to 999999"' },
        { name: 'reject:B-2', data: { sku: 'B-2' }, reason: 'B-2: field Price = 0 breaks "0.01 to 999999.99"' },
      ]);
      const failed = await log.queue.getFailed();
      expect(failed.map((job) => [job.name, job.failedReason, job.data.sku]).sort()).toEqual([
        ['reject:A-1', 'A-1: field Stock = -1 breaks "0 to 999999"', 'A-1'],
        ['reject:B-2', 'B-2: field Price = 0 breaks "0.01 to 999999.99"', 'B-2'],
      ]);
      expect(await log.queue.getWaitingCount()).toBe(0);
    } finally {
      await log.close();
    }
  });

  it('records an entry whose id is already in the queue only once', async () => {
    const log = new FailedJobLog({ connection: redis, prefix, queueName: 'rejects-c', removeOnFail });
    try {
      const entry = { id: 'reject-abc', name: 'reject:A-1', data: {}, reason: 'bad' };
      expect(await log.record([entry, entry])).toEqual([entry]);
      expect(await log.record([entry, { ...entry, id: 'reject-def' }])).toEqual([{ ...entry, id: 'reject-def' }]);
      expect(await log.queue.getFailedCount()).toBe(2);
    } finally {
      await log.close();
    }
  });

  it('fails the entries of two instances recording at once, each with its own reason', async () => {
    const logs = [0, 1].map(() => new FailedJobLog({ connection: redis, prefix, queueName: 'rejects-b', removeOnFail }));
    try {
      await Promise.all(
        logs.map((log, i) =>
          log.record(Array.from({ length: 20 }, (_, n) => ({ name: `reject:${i}-${n}`, data: {}, reason: `why ${i}-${n}` }))),
        ),
      );
      const failed = await logs[0]!.queue.getFailed(0, -1);
      expect(failed).toHaveLength(40);
      expect(failed.every((job) => job.failedReason === `why ${job.name.slice('reject:'.length)}`)).toBe(true);
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  });
});
