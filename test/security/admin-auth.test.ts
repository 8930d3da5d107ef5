import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { deleteKeys } from '../support/redis.js';

const prefix = `test-${randomUUID()}`;
const token = `tok-${randomUUID()}`;
const dir = mkdtempSync(join(tmpdir(), 'storesync-admin-auth-'));
let sim: Simulator;
let daemon: Daemon;
let open: Daemon;

/** A daemon on a random port with the given admin settings; the HTTP host is left at its default. */
async function daemonWith(env: Record<string, string>, ownPrefix: string): Promise<Daemon> {
  const config = loadConfig({
    env: { ...env, STORE_PASSWORD: 'demo-password' },
    overrides: {
      store: { baseUrl: sim.url, username: 'demo' },
      redis: { url: 'redis://127.0.0.1:6379/0', prefix: ownPrefix },
      http: { port: 0 },
      log: { level: 'silent' },
      sales: { sink: { kind: 'file', dir } },
      shutdown: { timeoutMs: 2000 },
    },
  });
  return startDaemon({ config, logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, items: 5, sales: 0 });
  daemon = await daemonWith({ ADMIN_TOKEN: token, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin-secret' }, prefix);
  open = await daemonWith({}, `${prefix}-none`);
});

afterAll(async () => {
  await daemon?.close();
  await open?.close();
  await sim?.close();
  const redis = new Redis('redis://127.0.0.1:6379/0');
  for (const p of [prefix, `${prefix}-none`]) await deleteKeys(redis, p);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('/admin authentication', () => {
  it('binds 127.0.0.1 when http.host is not configured', () => {
    expect(loadConfig({ env: {} }).http.host).toBe('127.0.0.1');
    expect(new URL(daemon.url).hostname).toBe('127.0.0.1');
  });

  it.each([
    ['no credentials', undefined],
    ['a wrong bearer token', `Bearer ${token}x`],
    ['an empty bearer token', 'Bearer '],
    ['the token as basic password', basic('admin', token)],
    ['a wrong basic password', basic('admin', 'admin-secreT')],
    ['a wrong basic user', basic('root', 'admin-secret')],
    ['an unknown scheme', `Token ${token}`],
  ])('answers 401 with a Basic challenge to %s', async (_what, authorization) => {
    const res = await fetch(`${daemon.url}/admin/queues`, { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(await res.text()).not.toContain(token);
  });

  it('lets the right bearer token and the right basic credentials in', async () => {
    for (const authorization of [`Bearer ${token}`, basic('admin', 'admin-secret')]) {
      const res = await fetch(`${daemon.url}/admin/queues`, { headers: { authorization } });
      expect(res.status).toBe(200);
    }
  });

  it('queues no resync job for a request without credentials', async () => {
    const res = await fetch(`${daemon.url}/admin/resync/inventory`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dryRun: true }),
    });
    expect(res.status).toBe(401);
    const queue = new Queue('control', { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    try {
      expect(await queue.count()).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('refuses /admin when no admin credentials are configured, whatever is sent', async () => {
    for (const authorization of [undefined, 'Bearer ', basic('', '')]) {
      const res = await fetch(`${open.url}/admin/queues`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(403);
    }
  });

  it('keeps /metrics and /livez open', async () => {
    expect((await fetch(`${daemon.url}/livez`)).status).toBe(200);
    expect((await fetch(`${daemon.url}/metrics`)).status).toBe(200);
  });
});
