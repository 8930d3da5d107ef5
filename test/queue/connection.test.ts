/** src/queue/connection.ts: the one Redis factory (BullMQ-ready, reconnecting forever) and the state key layout. */
import { Queue, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import { createRedis, QUEUE_NAMES, stateKey } from '../../src/queue/connection.js';
import { type RedisServer, startRedisServer } from '../../src/queue/redis-server.js';
import { waitFor } from '../../src/wait-for.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function privateRedis(): Promise<RedisServer> {
  const server = await startRedisServer();
  cleanups.push(() => server.destroy());
  return server;
}

describe('createRedis', () => {
  it('holds a command issued while Redis is down and runs it once Redis is back, instead of failing it', async () => {
    const server = await privateRedis();
    const redis = createRedis(server.url);
    // Reconnection attempts against the stopped server report errors; the test only needs them not to be thrown.
    redis.on('error', () => undefined);
    cleanups.push(() => redis.disconnect());
    await redis.set('k', 'before');

    await server.kill();
    await waitFor(() => redis.status !== 'ready', { message: 'the client to notice the outage' });
    const pending = redis.incr('counter');
    await server.start();
    // The restarted server is empty (no persistence): the held INCR runs there.
    expect(await pending).toBe(1);
    expect(await redis.get('k')).toBeNull();
  });

  it('gives a connection a BullMQ worker accepts (blocking commands need maxRetriesPerRequest null)', async () => {
    const server = await privateRedis();
    const connection = createRedis(server.url);
    cleanups.push(() => connection.disconnect());
    expect(connection.options.maxRetriesPerRequest).toBeNull();
    const queue = new Queue('conn-test', { connection: createRedis(server.url) });
    const worker = new Worker('conn-test', async (job) => `done ${job.name}`, { connection });
    cleanups.push(() => queue.close(), () => worker.close());
    const job = await queue.add('one', {});
    const finished = new Promise<string>((resolve) => worker.on('completed', (_job, result: string) => resolve(result)));
    expect(await finished).toBe('done one');
    expect(await queue.getJobState(job.id!)).toBe('completed');
  });

  it('lets a caller override an option', () => {
    const redis = createRedis('redis://127.0.0.1:1/0', { lazyConnect: true, maxRetriesPerRequest: 1 });
    expect(redis.options.maxRetriesPerRequest).toBe(1);
    expect(redis.options.enableReadyCheck).toBe(true);
    redis.disconnect();
  });
});

describe('stateKey and QUEUE_NAMES', () => {
  it('puts state keys under `prefix:state:` and names each queue once', () => {
    expect(stateKey('storesync', 'inv', 'lock', 'SKU-1')).toBe('storesync:state:inv:lock:SKU-1');
    expect(stateKey('p', 'sales', 1, 42)).toBe('p:state:sales:1:42');
    expect(new Set(Object.values(QUEUE_NAMES)).size).toBe(Object.values(QUEUE_NAMES).length);
    expect(QUEUE_NAMES.fulfillment).toBe('fulfillment');
  });
});
