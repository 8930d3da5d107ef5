import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Daemon, startDaemon } from '../../src/daemon.js';
import { silentLogger } from '../../src/log.js';
import { WorkerWatchdog } from '../../src/ops/worker-watchdog.js';
import { createRedis } from '../../src/queue/connection.js';
import { type RedisServer, startRedisServer } from '../../src/queue/redis-server.js';
import { type Simulator,startSimulator } from '../../src/simulator/index.js';
import type { ControlActions } from '../../src/sync/control/actions.js';
import { waitFor } from '../../src/wait-for.js';
import { deleteKeys } from '../support/redis.js';
import { logCollector, testConfig, testPrefix } from './helpers.js';

const TOKEN = 'watchdog-test-token-123456';

describe('worker watchdog', () => {
  const prefix = testPrefix();
  const redis = new Redis('redis://127.0.0.1:6379/0');

  afterAll(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it('runs a watched worker that is not running, and leaves a paused one alone', async () => {
    const watchdog = new WorkerWatchdog({ logger: silentLogger(), intervalMs: 60_000 });
    const connection = createRedis('redis://127.0.0.1:6379/0');
    const queue = new Queue('watched', { connection, prefix });
    const worker = new Worker('watched', async () => 'done', { connection: createRedis('redis://127.0.0.1:6379/0'), prefix, autorun: false });
    const paused = new Worker('watched-paused', async () => 'done', { connection: createRedis('redis://127.0.0.1:6379/0'), prefix, autorun: false });
    await paused.pause(true);
    try {
      watchdog.watch(worker);
      watchdog.watch(paused);
      const restarted = watchdog.events.next('worker:restarted');
      watchdog.check();
      expect(await restarted).toEqual({ queue: 'watched' });
      expect(worker.isRunning()).toBe(true);
      expect(paused.isRunning()).toBe(false);
      const job = await queue.add('one', {});
      await waitFor(async () => (await queue.getJobState(job.id as string)) === 'completed', { message: 'the job to complete' });
    } finally {
      watchdog.stop();
      await worker.close();
      await paused.close();
      await queue.close();
      connection.disconnect();
    }
  });
});

describe('daemon across a Redis outage', () => {
  let server: RedisServer;
  let sim: Simulator;
  let daemon: Daemon;
  const logs = logCollector('info');
  const actions: ControlActions = { reconcile: async ({ skus }) => ({ skus }), pullSales: async () => ({}) };

  beforeAll(async () => {
    server = await startRedisServer();
    sim = await startSimulator({ port: 0 });
    const config = testConfig({
      redis: { url: server.url, prefix: testPrefix() },
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password' },
      admin: { token: TOKEN },
      sales: { enabled: false },
    });
    daemon = await startDaemon({ config, logger: logs.logger, controlActions: actions }, { role: 'all' });
  });

  afterAll(async () => {
    await daemon.close();
    await sim.close();
    await server.destroy();
  });

  const readyz = async () => {
    const response = await fetch(`${daemon.url}/readyz`);
    return { status: response.status, body: (await response.json()) as { checks: { redis: { ok: boolean } } } };
  };

  const resync = async (sku: string): Promise<string> => {
    const response = await fetch(`${daemon.url}/admin/resync/inventory`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ skus: [sku] }),
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { jobId: string }).jobId;
  };

  const completes = (jobId: string) =>
    waitFor(async () => (await daemon.control.queue.getJobState(jobId)) === 'completed', { timeoutMs: 20_000, message: `job ${jobId} to complete` });

  it('reports Redis down on /readyz, reconnects when it is back, and processes jobs again by itself', async () => {
    await waitFor(async () => (await readyz()).status === 200, { message: 'ready before the outage' });
    await completes(await resync('BEFORE-1'));

    await server.kill();
    const down = await waitFor(async () => {
      const report = await readyz();
      return report.status === 503 ? report : undefined;
    }, { message: '/readyz to report the outage' });
    expect(down.body.checks.redis.ok).toBe(false);
    expect((await fetch(`${daemon.url}/livez`)).status).toBe(200);

    await server.start();
    await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 20_000, message: 'ready after the outage' });
    await completes(await resync('AFTER-1'));

    const lines = logs.lines();
    expect(lines.filter((line) => String(line.msg).startsWith('Redis unreachable: '))).toHaveLength(1);
    expect(lines.filter((line) => String(line.msg).startsWith('Redis reachable again after '))).toHaveLength(1);
  });
});
