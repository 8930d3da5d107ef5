/**
 * The daemon while its Redis goes away and comes back (a private server, SIGKILLed and started again): /readyz
 * answers 503 and storesync_redis_up is 0 meanwhile, then 200 and 1; the restarted server (a new run_id) counts as
 * one new master in storesync_redis_failovers_total.
 *
 * And issue 28 points 3 and 4: `/metrics` answers within a second with `storesync_redis_up 0` and the queue gauges of
 * the last read, marked stale by their age; `/readyz` says in words what is unreachable; the log holds one line when
 * the outage starts, one per interval with the errors it kept out, one when it ends with its duration, and no stack
 * trace nor worker error line (before: `inventory worker error` with a stack and `error`-level `fulfillment worker
 * error` lines, several a second, for a flow without any source; /metrics took the queue collector's 2 s, or for ever
 * with a snapshot diff source).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

import { type Daemon, startDaemon } from '../../src/daemon.js';
import { Metrics } from '../../src/metrics.js';
import { type RedisServer, startRedisServer } from '../../src/queue/redis-server.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { logCollector, testConfig, testPrefix } from './helpers.js';

/** How often the outage is logged while it lasts (`log.summaryIntervalMs`, a minute in production). */
const INTERVAL_MS = 1000;

let server: RedisServer;
let sim: Simulator;

beforeAll(async () => {
  server = await startRedisServer();
  sim = await startSimulator({ port: 0, items: 3, sales: 0, users: 0, clients: 0 });
});

afterAll(async () => {
  await sim.close();
  await server.destroy();
});

/** One scrape: how long it took, the value of each sample line, and the text. */
async function scrape(url: string): Promise<{ ms: number; text: string; value(name: string): number | undefined }> {
  const started = performance.now();
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(15_000) })).text();
  const ms = performance.now() - started;
  const value = (name: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  };
  return { ms, text, value };
}

const metric = async (d: Daemon, name: string): Promise<number | undefined> => (await scrape(d.url)).value(name);

describe('the daemon while Redis is unreachable', () => {
  it('is not ready and reports redis_up 0, then ready, up and one new master once Redis is back', async () => {
    const logs = logCollector('info');
    const config = testConfig({
      redis: { url: server.url, prefix: testPrefix() },
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1 },
      sales: { enabled: false },
    });
    const d = await startDaemon({ config, logger: logs.logger, metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    onTestFinished(() => d.close());
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

describe('the daemon during a Redis outage', () => {
  it('scrapes within a second, says what is unreachable, and logs the outage in three kinds of line', async () => {
    const logs = logCollector('info');
    const config = testConfig({
      redis: { url: server.url, prefix: testPrefix() },
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1 },
      sales: { enabled: false },
      log: { summaryIntervalMs: INTERVAL_MS },
    });
    const d = await startDaemon({ config, logger: logs.logger, metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    onTestFinished(() => d.close());
    await waitFor(async () => (await fetch(`${d.url}/readyz`)).status === 200, { message: '/readyz 200 before the outage' });
    const fresh = await scrape(d.url);
    expect(fresh.value('storesync_redis_up')).toBe(1);
    expect(fresh.value('storesync_redis_gauges_age_seconds'), 'gauges read by this scrape').toBeLessThan(0.5);

    const before = logs.lines().length;
    const killedAt = Date.now();
    await server.kill();
    const readyz = await waitFor(
      async () => {
        const response = await fetch(`${d.url}/readyz`, { signal: AbortSignal.timeout(5000) });
        return response.status === 503 ? ((await response.json()) as { checks: { redis: { error: string } } }) : undefined;
      },
      { message: '/readyz 503 while Redis is down' },
    );
    expect(readyz.checks.redis.error).toMatch(new RegExp(`^connection refused at 127\\.0\\.0\\.1:${server.port}, since \\d{4}-\\d\\d-\\d\\dT`));
    expect(readyz.checks.redis.error).not.toContain("Stream isn't writeable");

    // One interval line written: the outage has lasted over INTERVAL_MS, and every collector's read is pending.
    await waitFor(() => logs.lines().slice(before).some((line) => String(line.msg).startsWith('Redis still unreachable')), {
      message: 'the first interval line of the outage',
    });
    for (let i = 0; i < 2; i += 1) {
      const down = await scrape(d.url);
      expect(down.ms, `/metrics took ${Math.round(down.ms)} ms while Redis was down`).toBeLessThan(1000);
      expect(down.value('storesync_redis_up')).toBe(0);
      // Stale: the gauges are at least as old as the outage, and keep their last values meanwhile.
      expect(down.value('storesync_redis_gauges_age_seconds')).toBeGreaterThanOrEqual((Date.now() - killedAt) / 1000 - 0.2);
      expect(down.text).toContain('storesync_queue_jobs{queue="inventory",state="waiting"} 0');
    }

    await server.start();
    await waitFor(async () => (await fetch(`${d.url}/readyz`)).status === 200, { message: '/readyz 200 again', timeoutMs: 20_000 });
    const outageMs = Date.now() - killedAt;
    const ended = await waitFor(() => logs.lines().slice(before).find((line) => String(line.msg).startsWith('Redis reachable again')), {
      message: 'the line of the outage end',
    });
    // Each connection reconnects at its own pace: the queues' a little after the health connection.
    await waitFor(async () => ((await scrape(d.url)).value('storesync_redis_gauges_age_seconds') ?? Infinity) < 0.5, {
      message: 'the gauges read again once Redis is back',
    });

    const lines = logs.lines().slice(before);
    const starts = lines.filter((line) => String(line.msg).startsWith('Redis unreachable'));
    expect(starts.map((line) => line.msg)).toEqual([`Redis unreachable: connection refused at 127.0.0.1:${server.port}`]);
    expect(lines.filter((line) => String(line.msg).startsWith('Redis reachable again'))).toHaveLength(1);
    expect(ended.downS).toBeGreaterThan(INTERVAL_MS / 1000);
    // Rounded to a tenth of a second: at most 0.05 s over the time from the kill to /readyz 200.
    expect(ended.downS).toBeLessThanOrEqual(outageMs / 1000 + 0.05);
    expect(ended.msg).toMatch(/^Redis reachable again after \d+(\.\d)? s; \d+ errors suppressed \(.*\) during the outage$/);
    // The interval lines count what they kept out of the log, per flow: the workers' errors among them.
    const interval = lines.filter((line) => String(line.msg).startsWith('Redis still unreachable'));
    expect(interval.length).toBeGreaterThanOrEqual(1);
    const suppressed = interval.map((line) => line.suppressed as Record<string, number>);
    expect(suppressed.some((counts) => (counts.inventory ?? 0) > 0 && (counts.fulfillment ?? 0) > 0), JSON.stringify(suppressed)).toBe(true);

    const withStack = lines.filter((line) => JSON.stringify(line).includes('"stack"'));
    expect(withStack, 'a line with a stack trace during the outage').toEqual([]);
    const workerErrors = lines.filter((line) => /worker error/.test(String(line.msg)));
    expect(workerErrors, 'worker error lines during the outage').toEqual([]);
    // Besides the outage's own lines: the restarted server counted as a new master, and the activity summaries.
    const others = lines.filter(
      (line) => !/^Redis (unreachable|still unreachable|reachable again)/.test(String(line.msg)) && line.msg !== 'Redis master changed (failover or restart)' && line.summary !== true,
    );
    expect(others, 'other lines during the outage').toEqual([]);
  }, 60_000);
});
