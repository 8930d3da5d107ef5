import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../src/log.js';
import { Readiness } from '../../src/ops/health.js';
import { checkEvictionPolicy } from '../../src/ops/redis-monitor.js';
import { createRedis } from '../../src/queue/connection.js';
import { type RedisServer, startRedisServer } from '../../src/queue/redis-server.js';
import { type Simulator,startSimulator } from '../../src/simulator/index.js';
import { StoreClient } from '../../src/store/client.js';
import { logCollector, testConfig } from './helpers.js';

describe('readiness checks', () => {
  let sim: Simulator;
  const redis = createRedis('redis://127.0.0.1:6379/0');

  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });

  afterAll(async () => {
    await sim.close();
    redis.disconnect();
  });

  const client = (password: string) =>
    new StoreClient({ config: testConfig({ store: { baseUrl: sim.url, username: 'demo', password, retry: { attempts: 1 } } }).store, logger: silentLogger() });

  it('is ready when Redis answers and the store accepts the login', async () => {
    const store = client('demo-password');
    const report = await new Readiness({ redis, store }).check();
    await store.close();
    expect(report).toEqual({ ok: true, checks: { redis: { ok: true }, store: { ok: true } } });
  });

  it('logs in once per cache period however often it is asked', async () => {
    const store = client('demo-password');
    let now = 1_000_000;
    const readiness = new Readiness({ redis, store, storeCacheMs: 5000, now: () => now });
    const before = sim.counters().logins;
    await Promise.all([readiness.check(), readiness.check(), readiness.check()]);
    await readiness.check();
    expect(sim.counters().logins - before).toBe(1);
    now += 5000;
    await readiness.check();
    await store.close();
    expect(sim.counters().logins - before).toBe(2);
  });

  it("adds no login while the store client's session holds a hash (the daemon's check)", async () => {
    const store = client('demo-password');
    let now = 1_000_000;
    const readiness = new Readiness({ redis, store: { login: () => store.authenticate() }, storeCacheMs: 5000, now: () => now });
    const before = sim.counters().logins;
    for (let i = 0; i < 3; i += 1) {
      expect((await readiness.check()).ok).toBe(true);
      now += 5000;
    }
    await store.close();
    expect(sim.counters().logins - before).toBe(1);
  });

  it('stays not ready while the store refuses the credentials, without a login per check', async () => {
    const store = client('wrong-password-xyz');
    let now = 1_000_000;
    const readiness = new Readiness({ redis, store: { login: () => store.authenticate() }, storeCacheMs: 1000, now: () => now });
    const before = sim.counters().failedLogins;
    for (let i = 0; i < 3; i += 1) {
      const report = await readiness.check();
      expect(report.ok).toBe(false);
      expect(report.checks.store.error).toMatch(/ERR_STORE_AUTH: .*refused|ERR_STORE_AUTH: .*wrong username or password/);
      now += 1000;
    }
    await store.close();
    expect(sim.counters().failedLogins - before).toBe(1);
  });

  it('reports a refused login as not ready without showing the password', async () => {
    const store = client('wrong-password-xyz');
    const report = await new Readiness({ redis, store }).check();
    await store.close();
    expect(report.ok).toBe(false);
    expect(report.checks.redis.ok).toBe(true);
    expect(report.checks.store.error).toContain('ERR_STORE_AUTH');
    expect(JSON.stringify(report)).not.toContain('wrong-password-xyz');
  });
});

describe('Redis eviction policy check', () => {
  const servers: RedisServer[] = [];

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.destroy()));
  });

  async function check(args: string[]) {
    const server = await startRedisServer({ args });
    servers.push(server);
    const connection = createRedis(server.url);
    const logs = logCollector();
    try {
      const policy = await checkEvictionPolicy(connection, logs.logger);
      return { policy, lines: logs.lines() };
    } finally {
      connection.disconnect();
    }
  }

  it('warns when maxmemory-policy is not noeviction', async () => {
    const { policy, lines } = await check(['--maxmemory-policy', 'allkeys-lru']);
    expect(policy).toBe('allkeys-lru');
    expect(lines.find((line) => line.level === 'warn')?.msg).toContain('noeviction');
  });

  it('stays quiet when maxmemory-policy is noeviction', async () => {
    const { policy, lines } = await check(['--maxmemory-policy', 'noeviction']);
    expect(policy).toBe('noeviction');
    expect(lines).toHaveLength(0);
  });

  it('only notes it when CONFIG is disabled, as on managed Redis', async () => {
    const { policy, lines } = await check(['--rename-command', 'CONFIG', '""']);
    expect(policy).toBeUndefined();
    expect(lines.map((line) => line.level)).toEqual(['info']);
    expect(lines[0]?.msg).toContain('could not read Redis maxmemory-policy');
  });
});
