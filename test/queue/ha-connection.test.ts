/**
 * createRedis on real replicated Redis: through Sentinel it follows a killed primary to the promoted replica (commands
 * and a BullMQ worker carry on), and MasterWatch counts that failover once; a restarted single server counts too.
 */
import { Queue, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { createRedis } from '../../src/queue/connection.js';
import { type FailoverEvent, MasterWatch } from '../../src/queue/master-watch.js';
import { startRedisServer } from '../../src/queue/redis-server.js';
import { waitFor } from '../../src/wait-for.js';
import { startSentinelSet } from '../support/redis-ha.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('createRedis through Sentinel', () => {
  it('follows a SIGKILLed primary to the promoted replica: writes and a worker carry on, one failover is seen', async () => {
    const set = await startSentinelSet({ password: 'data-pw-ha', sentinelPassword: 'sentinel-pw-ha' });
    cleanups.push(() => set.stop());
    const { redis: target } = loadConfig({
      env: {},
      overrides: { redis: { sentinels: [...set.sentinelNodes], name: set.name, password: 'data-pw-ha', sentinelPassword: 'sentinel-pw-ha', prefix: 'ha-conn' } },
    });
    const redis = createRedis(target);
    redis.on('error', () => undefined);
    cleanups.push(() => redis.disconnect());
    const watch = new MasterWatch(target.prefix);
    const failovers: FailoverEvent[] = [];
    watch.onFailover((event) => failovers.push(event));
    watch.track(redis);
    await redis.set('ha-conn:before', '1');
    await waitFor(() => watch.known, { message: 'the first master identity' });

    const processed: string[] = [];
    const queueConnection = createRedis(target);
    const workerConnection = createRedis(target);
    const queue = new Queue('ha', { connection: queueConnection, prefix: target.prefix });
    const worker = new Worker('ha', async (job) => void processed.push(job.name), { connection: workerConnection, prefix: target.prefix });
    worker.on('error', () => undefined);
    queue.on('error', () => undefined);
    cleanups.push(async () => {
      await worker.close(true);
      await queue.close();
      queueConnection.disconnect();
      workerConnection.disconnect();
    });
    await queue.add('one', {});
    await waitFor(() => processed.includes('one'), { message: 'the job before the failover' });

    await set.primary.kill();
    const newPort = await set.waitForNewMaster(set.primary.port);
    expect(newPort).toBe(set.replica.port);
    // Held until the connection found the new master, then written there.
    await redis.set('ha-conn:after', '2');
    expect(await redis.get('ha-conn:after')).toBe('2');
    await waitFor(() => failovers.length > 0, { message: 'MasterWatch to see the new master', timeoutMs: 20_000 });
    expect(failovers).toHaveLength(1);
    expect(failovers[0]?.from.runId).not.toBe(failovers[0]?.to.runId);

    // bullmq #2466: the worker fetches again after the failover.
    await queue.add('two', {});
    await waitFor(() => processed.includes('two'), { message: 'the worker to fetch after the failover', timeoutMs: 30_000 });
  }, 120_000);
});

describe('MasterWatch on one server', () => {
  it('counts a restart (a new run_id) as a new master, once, whichever connection sees it', async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.destroy());
    const watch = new MasterWatch('mw');
    const seen: FailoverEvent[] = [];
    watch.onFailover((event) => seen.push(event));
    const a = createRedis(server.url);
    const b = createRedis(server.url);
    for (const connection of [a, b]) {
      connection.on('error', () => undefined);
      cleanups.push(() => connection.disconnect());
      watch.track(connection);
    }
    await waitFor(() => watch.known, { message: 'the first identity' });
    const first = watch.known;
    await server.kill();
    await server.start();
    await waitFor(() => seen.length > 0, { message: 'the restart to be noticed' });
    await a.ping();
    await b.ping();
    await watch.check(a);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.from).toEqual(first);
    expect(watch.known?.runId).not.toBe(first?.runId);
  });
});
