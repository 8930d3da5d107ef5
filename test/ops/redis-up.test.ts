/**
 * The daemon while its Redis goes away and comes back (a private server, SIGKILLed and started again): /readyz
 * answers 503 and storesync_redis_up is 0 meanwhile, then 200 and 1; the restarted server (a new run_id) counts as
 * one new master in storesync_redis_failovers_total.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Daemon, startDaemon } from '../../src/daemon.js';
import { Metrics } from '../../src/metrics.js';
import { type RedisServer, startRedisServer } from '../../src/queue/redis-server.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { logCollector, testConfig, testPrefix } from './helpers.js';

let server: RedisServer;
let sim: Simulator;
let daemon: Daemon | undefined;

beforeAll(async () => {
  server = await startRedisServer();
  sim = await startSimulator({ port: 0, items: 3, sales: 0, users: 0, clients: 0 });
});

afterAll(async () => {
  await daemon?.close();
  await sim.close();
  await server.destroy();
});

const metric = async (d: Daemon, name: string): Promise<number | undefined> => {
  const text = await (await fetch(`${d.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};

describe('the daemon while Redis is unreachable', () => {
  it('is not ready and reports redis_up 0, then ready, up and one new master once Redis is back', async () => {
    const logs = logCollector('info');
    const config = testConfig({
      redis: { url: server.url, prefix: testPrefix() },
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1 },
      sales: { enabled: false },
    });
    daemon = await startDaemon({ config, logger: logs.logger, metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    const d = daemon;
    await waitFor(async () => (await fetch(`${d.url}/readyz`)).status === 200, { message: '/readyz 200' });
    await waitFor(async () => (await metric(d, 'storesync_redis_up')) === 1, { message: 'redis_up 1' });
    expect(await metric(d, 'storesync_redis_failovers_total')).toBe(0);
    await waitFor(() => d.masterWatch.known, { message: 'the first master identity' });

    await server.kill();
    await waitFor(async () => (await fetch(`${d.url}/readyz`)).status === 503, { message: '/readyz 503 while Redis is down' });
    expect(await metric(d, 'storesync_redis_up')).toBe(0);

    await server.start();
    await waitFor(async () => (await fetch(`${d.url}/readyz`)).status === 200, { message: '/readyz 200 again', timeoutMs: 20_000 });
    await waitFor(async () => (await metric(d, 'storesync_redis_up')) === 1, { message: 'redis_up 1 again' });
    await waitFor(async () => (await metric(d, 'storesync_redis_failovers_total')) === 1, { message: 'the restart counted as a new master' });
    expect(logs.lines().filter((line) => line.msg === 'Redis master changed (failover or restart)')).toHaveLength(1);
  }, 60_000);
});
