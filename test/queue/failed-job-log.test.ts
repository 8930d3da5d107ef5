import { randomUUID } from 'node:crypto';

import { Queue, Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import { FailedJobLog } from '../../src/queue/failed-job-log.js';
import { deleteKeys } from '../support/redis.js';
import { replyCutter } from '../support/reply-cutter.js';

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

  it('fails and returns once an entry another instance left waiting, and one it left active when it stopped', async () => {
    const queueName = 'rejects-left';
    // The stopped instance: it added both, fetched one (its lock lasts 200 ms) and failed neither.
    const queue = new Queue(queueName, { connection: redis, prefix });
    const stopped = new Worker(queueName, null, { connection: redis, prefix, autorun: false, lockDuration: 200 });
    await queue.add('reject:A', { reason: 'why A' }, { jobId: 'reject-a', attempts: 1 });
    await queue.add('reject:W', { reason: 'why W' }, { jobId: 'reject-w', attempts: 1 });
    expect((await stopped.getNextJob('stopped-token', { block: false }))?.id).toBe('reject-a');
    await stopped.close(true);
    await queue.close();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const log = new FailedJobLog({ connection: redis, prefix, queueName, removeOnFail });
    try {
      const a = { id: 'reject-a', name: 'reject:A', data: {}, reason: 'why A' };
      const w = { id: 'reject-w', name: 'reject:W', data: {}, reason: 'why W' };
      // Neither was failed (so neither was counted by the stopped instance): both are returned, then never again.
      expect(await log.record([a, w])).toEqual([a, w]);
      expect(await log.record([a, w])).toEqual([]);
      expect((await log.queue.getFailed(0, -1)).map((job) => [job.id, job.failedReason]).sort()).toEqual([
        ['reject-a', 'why A'],
        ['reject-w', 'why W'],
      ]);
      expect(await log.queue.getJobCounts('waiting', 'active')).toEqual({ waiting: 0, active: 0 });
    } finally {
      await log.close();
    }
  });

  // ioredis sends an unanswered command again after reconnecting, so the command may run twice.
  it('leaves every entry failed and returned exactly once when the reply to any one command of a call is lost', async () => {
    const cutter = await replyCutter(6379);
    const entries = ['A', 'B', 'C'].map((code) => ({ id: `reject-${code}`, name: `reject:${code}`, data: { sku: code }, reason: `why ${code}` }));
    const run = async (queueName: string, cutAt: number | undefined): Promise<{ returned: string[]; sent: number; cut: boolean }> => {
      const connection = createRedis(`redis://127.0.0.1:${cutter.port}/0`);
      connection.on('error', () => undefined);
      const log = new FailedJobLog({ connection, prefix, queueName, removeOnFail });
      try {
        await log.queue.getJobCounts();
        await log.queue.waitUntilReady();
        // The log's worker opens its blocking connection in the background; a chunk of its handshake
        // counted as chunk n would cut a connection the call never waits on (CI, 2026-11-27: chunk 1).
        await cutter.quiet();
        cutter.cutAfter(cutAt ?? Number.MAX_SAFE_INTEGER);
        const returned = (await log.record(entries)).map((entry) => String(entry.id));
        const sent = cutter.sent;
        // The same rows read again (a poll's overlap) add nothing.
        returned.push(...(await log.record(entries)).map((entry) => String(entry.id)));
        return { returned: returned.sort(), sent, cut: cutter.cut };
      } finally {
        await log.close();
        connection.disconnect();
      }
    };
    try {
      const whole = await run('rejects-uncut', undefined);
      expect(whole.returned).toEqual(['reject-A', 'reject-B', 'reject-C']);
      expect(whole.sent).toBeGreaterThan(3);
      const wrong: string[] = [];
      for (let n = 1; n <= whole.sent; n += 1) {
        const queueName = `rejects-cut-${n}`;
        const { returned, cut } = await run(queueName, n);
        const check = new Queue(queueName, { connection: redis, prefix });
        const failed = (await check.getFailed(0, -1)).map((job) => `${job.id} ${job.failedReason}`).sort();
        const left = await check.getJobCounts('waiting', 'active');
        await check.close();
        const state = JSON.stringify({ cut, returned, failed, left });
        const expected = JSON.stringify({
          cut: true,
          returned: ['reject-A', 'reject-B', 'reject-C'],
          failed: ['reject-A why A', 'reject-B why B', 'reject-C why C'],
          left: { waiting: 0, active: 0 },
        });
        if (state !== expected) wrong.push(`reply to chunk ${n} lost: ${state}`);
      }
      expect(wrong).toEqual([]);
    } finally {
      await cutter.close();
    }
  }, 60_000);
});
