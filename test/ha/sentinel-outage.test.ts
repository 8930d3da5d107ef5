/**
 * Sentinel with no master (issue 28 points 3 and 4): both data nodes SIGKILLed while the three sentinels stay up.
 * `/metrics` still answers within a second with `storesync_redis_up 0` and stale queue gauges (before: 12 s and
 * nothing, so StoresyncRedisDown could not fire); `/readyz` and the log say what the sentinels say, never ioredis's
 * "All sentinels are unreachable" (it raises that when every sentinel answered and named a master that refused).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Daemon, startDaemon } from '../../src/daemon.js';
import { Metrics } from '../../src/metrics.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { logCollector, testConfig, testPrefix } from '../ops/helpers.js';
import { type SentinelSet, startSentinelSet } from '../support/redis-ha.js';

let set: SentinelSet;
let sim: Simulator;
let daemon: Daemon | undefined;

beforeAll(async () => {
  set = await startSentinelSet({ downAfterMs: 1000 });
  sim = await startSimulator({ port: 0, items: 3, sales: 0, users: 0, clients: 0 });
}, 60_000);

afterAll(async () => {
  await daemon?.close();
  await sim?.close();
  await set?.stop();
});

const readyzBody = async (url: string): Promise<{ status: number; redis: string }> => {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) });
  const body = (await response.json()) as { checks: { redis: { error?: string } } };
  return { status: response.status, redis: body.checks.redis.error ?? '' };
};

describe('the daemon while Sentinel names no reachable master', () => {
  it('scrapes within a second and says the sentinels answer but their master is down', async () => {
    const logs = logCollector('info');
    const config = testConfig({
      redis: { sentinels: set.sentinelNodes.map((node) => ({ ...node })), name: set.name, prefix: testPrefix() },
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1 },
      sales: { enabled: false },
      log: { summaryIntervalMs: 1000 },
    });
    daemon = await startDaemon({ config, logger: logs.logger, metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    const d = daemon;
    await waitFor(async () => (await readyzBody(d.url)).status === 200, { message: '/readyz 200 before the outage' });
    await fetch(`${d.url}/metrics`);
    const masterPort = await set.masterPort();
    const before = logs.lines().length;

    await set.primary.kill();
    await set.replica.kill();
    const sentinels = set.sentinelNodes.map((node) => `${node.host}:${node.port}`).join(',');
    const first = await waitFor(
      async () => {
        const body = await readyzBody(d.url);
        return body.status === 503 ? body : undefined;
      },
      { message: '/readyz 503 with no master' },
    );
    // At once: the sentinels answer (those that did within the probe's time, under load maybe not all three) and name
    // the master storesync cannot reach.
    const answering = (text: string): string[] => /sentinels (\S+) (answer but )?name /.exec(text)?.[1]?.split(',') ?? [];
    expect(first.redis).toMatch(new RegExp(`^(no master reachable: )?sentinels \\S+ (answer but )?name 127\\.0\\.0\\.1:${masterPort} as master`));
    expect(answering(first.redis).length, first.redis).toBeGreaterThan(0);
    expect(answering(first.redis).filter((node) => !sentinels.split(',').includes(node)), first.redis).toEqual([]);
    // Once the sentinels agree the master is down (down-after-milliseconds 1000), /readyz says so.
    const down = await waitFor(
      async () => {
        const body = await readyzBody(d.url);
        return body.status === 503 && body.redis.includes('which they see as down') ? body : undefined;
      },
      { message: '/readyz to say the sentinels see the master down', timeoutMs: 20_000 },
    );
    expect(down.redis).toMatch(
      new RegExp(`^no master reachable: sentinels \\S+ answer but name 127\\.0\\.0\\.1:${masterPort} as master, which they see as down \\([a-z_,]*[so]_down[a-z_,]*\\), since \\d{4}-`),
    );
    expect(answering(down.redis).filter((node) => !sentinels.split(',').includes(node)), down.redis).toEqual([]);

    const started = performance.now();
    const text = await (await fetch(`${d.url}/metrics`, { signal: AbortSignal.timeout(15_000) })).text();
    const ms = performance.now() - started;
    expect(ms, `/metrics took ${Math.round(ms)} ms with no master`).toBeLessThan(1000);
    expect(text).toMatch(/^storesync_redis_up 0$/m);
    const age = Number(/^storesync_redis_gauges_age_seconds (\S+)$/m.exec(text)?.[1]);
    expect(age, 'the queue gauges are marked stale').toBeGreaterThan(1);
    expect(text).toContain('storesync_queue_jobs{queue="inventory",state="waiting"} 0');

    await set.primary.start();
    await set.replica.start();
    await waitFor(() => logs.lines().slice(before).some((line) => String(line.msg).startsWith('Redis reachable again')), {
      message: 'the line of the outage end',
      timeoutMs: 30_000,
    });
    const lines = logs.lines().slice(before);
    const starts = lines.filter((line) => String(line.msg).startsWith('Redis unreachable: '));
    expect(starts).toHaveLength(1);
    expect(String(starts[0]?.msg)).toMatch(/^Redis unreachable: (no master reachable: )?sentinels 127\.0\.0\.1:\d+/);
    expect(lines.filter((line) => JSON.stringify(line).includes('All sentinels are unreachable')), 'ioredis text relayed').toEqual([]);
    expect(lines.filter((line) => /worker error/.test(String(line.msg)) || JSON.stringify(line).includes('"stack"'))).toEqual([]);
  }, 90_000);
});
