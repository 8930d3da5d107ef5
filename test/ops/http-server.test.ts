import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Config } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { Readiness } from '../../src/ops/health.js';
import { type HttpServer, startHttpServer } from '../../src/ops/http-server.js';
import { collectQueueDepth } from '../../src/ops/queue-depth.js';
import { createRedis, QUEUE_NAMES } from '../../src/queue/connection.js';
import { sparePort } from '../../src/queue/redis-server.js';
import { StoreClient } from '../../src/store/client.js';
import type { ControlActions, ReconcileRequest, SalesPullRequest } from '../../src/sync/control/actions.js';
import { type ControlFlow, startControlFlow } from '../../src/sync/control/index.js';
import { waitFor } from '../../src/wait-for.js';
import { deleteKeys } from '../support/redis.js';
import { basicAuth, logCollector, promtool, testConfig, testPrefix } from './helpers.js';

const TOKEN = 'test-admin-token-0123456789';
const redis = new Redis('redis://127.0.0.1:6379/0');
/** Every server gets its own prefix below the file's one, which is deleted (one SCAN) once the file is done. */
const base = testPrefix();
let servers = 0;

afterAll(async () => {
  await deleteKeys(redis, base);
  redis.disconnect();
});

/** Everything a server needs, built around a config. */
async function serve(admin: Partial<Config['admin']>, options: { redisUrl?: string; storeUrl?: string } = {}) {
  servers += 1;
  const prefix = `${base}:s${servers}`;
  const logs = logCollector();
  const storePort = await sparePort();
  const config = testConfig({
    redis: { prefix, ...(options.redisUrl ? { url: options.redisUrl } : {}) },
    admin,
    store: { baseUrl: options.storeUrl ?? `http://127.0.0.1:${storePort}`, username: 'demo', password: 'demo-password', retry: { attempts: 1 } },
  });
  const metrics = new Metrics({ defaultMetrics: true });
  const requests: Array<ReconcileRequest | SalesPullRequest> = [];
  const actions: ControlActions = {
    reconcile: async (request) => {
      requests.push(request);
      return { checked: 3, skus: request.skus, dryRun: request.dryRun };
    },
    pullSales: async (request) => {
      requests.push(request);
      return { pulled: 2, from: request.from, to: request.to };
    },
  };
  const connections: Redis[] = [];
  const connect = (): Redis => {
    const connection = createRedis(config.redis);
    connection.on('error', () => undefined);
    connections.push(connection);
    return connection;
  };
  const store = new StoreClient({ config: config.store, logger: silentLogger() });
  const control: ControlFlow = await startControlFlow(
    { config, connect, store, logger: logs.logger, metrics },
    { role: 'all', actions },
  );
  const inventory = new Queue(QUEUE_NAMES.inventory, { connection: connect(), prefix });
  inventory.on('error', () => undefined);
  const queues = [inventory, control.queue];
  collectQueueDepth(metrics, queues, { logger: logs.logger });
  const health = createRedis(config.redis, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  health.on('error', () => undefined);
  const server: HttpServer = await startHttpServer({
    config,
    logger: logs.logger,
    metrics,
    readiness: new Readiness({ redis: health, store, timeoutMs: 1000 }),
    queues,
    control: { queueName: QUEUE_NAMES.control, enqueue: (data) => control.enqueue(data) },
    enqueueTimeoutMs: 300,
  });
  return {
    url: server.url,
    logs,
    control,
    inventory,
    requests,
    async close() {
      await server.close();
      await control.close(1000);
      await inventory.close();
      await store.close();
      health.disconnect();
      for (const connection of connections) connection.disconnect();
    },
  };
}

type Served = Awaited<ReturnType<typeof serve>>;
const bearer = { authorization: `Bearer ${TOKEN}` };

describe('the queue dashboard, built at its first authenticated request', () => {
  it('does not load bull-board at start or for a refused request, then once for every request after', async () => {
    const s = await serve({ token: TOKEN, username: 'администратор', password: 'admin-secret-pw' });
    try {
      const loads = () => s.logs.lines().filter((line) => line.msg === 'queue dashboard loaded').length;
      expect((await fetch(`${s.url}/metrics`)).status).toBe(200);
      expect((await fetch(`${s.url}/admin/queues`)).status).toBe(401);
      expect(loads()).toBe(0);
      const page = await fetch(`${s.url}/admin/queues`, { headers: bearer });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(loads()).toBe(1);
      const api = await fetch(`${s.url}/admin/queues/api/queues`, { headers: bearer });
      expect(api.status).toBe(200);
      expect(((await api.json()) as { queues: unknown[] }).queues).toHaveLength(2);
      expect(loads()).toBe(1);
      // The forwarded request keeps its user, whatever its alphabet, for the dashboard's audit.
      const pause = await fetch(`${s.url}/admin/queues/api/queues/inventory/pause`, { method: 'PUT', headers: { authorization: basicAuth('администратор', 'admin-secret-pw') } });
      expect(pause.status).toBe(200);
      expect(s.logs.lines().find((line) => line.audit === true && line.action === 'dashboard:pause')).toMatchObject({ user: 'администратор', queueName: 'inventory', status: 200 });
    } finally {
      await s.close();
    }
  });
});

describe('HTTP server with admin credentials configured', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ token: TOKEN, username: 'admin', password: 'admin-secret-pw' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('answers /livez with 200 without checking dependencies', async () => {
    const response = await fetch(`${s.url}/livez`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 503 naming the store when the store is unreachable', async () => {
    type Report = { checks: Record<string, { ok: boolean; error?: string }> };
    // The health connection needs a moment to connect; until then Redis is reported down too.
    const body = await waitFor(async () => {
      const response = await fetch(`${s.url}/readyz`);
      expect(response.status).toBe(503);
      const report = (await response.json()) as Report;
      return report.checks.redis?.ok ? report : undefined;
    }, { message: 'Redis to be reported up' });
    expect(body.checks.redis?.ok).toBe(true);
    expect(body.checks.store?.ok).toBe(false);
    expect(body.checks.store?.error).toMatch(/ERR_STORE_NETWORK|ECONNREFUSED|connect/i);
  });

  it('serves /metrics with queue depth per queue and state, accepted by promtool', async () => {
    await s.inventory.add('SKU-1', { Code: 'SKU-1' });
    const response = await fetch(`${s.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toContain('storesync_queue_jobs{queue="inventory",state="waiting"} 1');
    expect(text).toContain('storesync_queue_jobs{queue="control",state="failed"} 0');
    expect(text).toContain('storesync_process_cpu_seconds_total');
    const check = await promtool(['check', 'metrics'], text);
    expect(check.stderr + check.stdout).toBe('');
    expect(check.code).toBe(0);
  });

  it('refuses /admin without credentials with 401 and a Basic challenge', async () => {
    const response = await fetch(`${s.url}/admin/queues`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
  });

  it('refuses a wrong bearer token and a wrong basic password with 401', async () => {
    expect((await fetch(`${s.url}/admin/queues`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    expect((await fetch(`${s.url}/admin/queues`, { headers: { authorization: basicAuth('admin', 'wrong') } })).status).toBe(401);
    expect((await fetch(`${s.url}/admin/queues`, { headers: { authorization: basicAuth('other', 'admin-secret-pw') } })).status).toBe(401);
    expect((await fetch(`${s.url}/admin/resync/inventory`, { method: 'POST' })).status).toBe(401);
  });

  it('serves the dashboard for the right bearer token and the right basic credentials', async () => {
    const withToken = await fetch(`${s.url}/admin/queues`, { headers: bearer });
    expect(withToken.status).toBe(200);
    expect(await withToken.text()).toContain('<html');
    const withBasic = await fetch(`${s.url}/admin/queues/api/queues`, { headers: { authorization: basicAuth('admin', 'admin-secret-pw') } });
    expect(withBasic.status).toBe(200);
    const body = (await withBasic.json()) as { queues: Array<{ name: string }> };
    expect(body.queues.map((queue) => queue.name).sort()).toEqual(['control', 'inventory']);
  });

  it('shows job data with secrets masked on the dashboard', async () => {
    const job = await s.inventory.add('SKU-2', { Code: 'SKU-2', password: 'do-not-show-me', nested: { token: 'tok-do-not-show' } });
    const response = await fetch(`${s.url}/admin/queues/api/queues/inventory/${job.id}`, { headers: bearer });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).toContain('SKU-2');
    expect(text).not.toContain('do-not-show-me');
    expect(text).not.toContain('tok-do-not-show');
  });

  it('queues an inventory resync: 202 with the job id, processed with the report as its result, audited', async () => {
    const response = await fetch(`${s.url}/admin/resync/inventory`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ skus: ['A-1', 'B-2'], dryRun: true }),
    });
    expect(response.status).toBe(202);
    const { jobId } = (await response.json()) as { jobId: string };
    const job = await waitFor(async () => {
      const found = await s.control.queue.getJob(jobId);
      return found?.finishedOn ? found : undefined;
    }, { message: 'the resync job to finish' });
    expect(job.name).toBe('reconcile:dry-run:A-1,B-2');
    expect(job.returnvalue).toEqual({ checked: 3, skus: ['A-1', 'B-2'], dryRun: true });
    expect(job.data).toMatchObject({ action: 'inventory-reconcile', requestedBy: 'token' });
    const audit = s.logs.lines().find((line) => line.audit === true && line.action === 'resync:inventory');
    expect(audit).toMatchObject({ user: 'token', jobId, job: 'reconcile:dry-run:A-1,B-2', dryRun: true });
  });

  it('queues a sales re-pull for a date window', async () => {
    const response = await fetch(`${s.url}/admin/resync/sales`, {
      method: 'POST',
      headers: { authorization: basicAuth('admin', 'admin-secret-pw'), 'content-type': 'application/json' },
      body: JSON.stringify({ from: '2024-03-01', to: '2024-03-02' }),
    });
    expect(response.status).toBe(202);
    const { jobId } = (await response.json()) as { jobId: string };
    const job = await waitFor(async () => {
      const found = await s.control.queue.getJob(jobId);
      return found?.finishedOn ? found : undefined;
    }, { message: 'the sales job to finish' });
    expect(job.returnvalue).toEqual({ pulled: 2, from: '2024-03-01', to: '2024-03-02' });
    expect(s.logs.lines().some((line) => line.audit === true && line.action === 'resync:sales' && line.user === 'admin')).toBe(true);
  });

  it.each([
    ['/admin/resync/inventory', { skus: 'A-1' }, 'skus'],
    ['/admin/resync/inventory', { skus: [''] }, 'skus[0]'],
    ['/admin/resync/inventory', { dryRun: 'yes' }, 'dryRun'],
    ['/admin/resync/inventory', { sku: ['A-1'] }, 'sku'],
    ['/admin/resync/sales', { from: '2024-13-01', to: '2024-12-31' }, 'from'],
    ['/admin/resync/sales', { from: '2024-01-01' }, 'to'],
    ['/admin/resync/sales', { from: '2024-02-01', to: '2024-01-01' }, 'to'],
  ])('answers 400 naming the field for POST %s with %j', async (path, body, field) => {
    const response = await fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { error: string; issues: Array<{ field: string }> };
    expect(answer.issues.map((issue) => issue.field)).toContain(field);
    expect(answer.error).toContain(`field ${field}`);
  });

  it('validates, names and stamps a control job added from the dashboard form', async () => {
    const add = (data: unknown) =>
      fetch(`${s.url}/admin/queues/api/queues/control/add`, {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ name: '__default__', data, options: {} }),
      });
    const bad = await add({ action: 'sales-pull', from: 'yesterday', to: '2024-01-01' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('field from');

    const good = await add({ action: 'inventory-reconcile', skus: ['Z-9'] });
    expect(good.status).toBe(200);
    const { job } = (await good.json()) as { job: { id: string; name: string } };
    expect(job.name).toBe('reconcile:Z-9');
    const stored = await s.control.queue.getJob(job.id);
    expect(stored?.data).toMatchObject({ action: 'inventory-reconcile', skus: ['Z-9'], requestedBy: 'token' });
    expect(s.logs.lines().some((line) => line.audit === true && line.action === 'dashboard:add' && line.queueName === 'control')).toBe(true);
  });

  it('audits dashboard mutations such as pausing and resuming a queue', async () => {
    const pause = await fetch(`${s.url}/admin/queues/api/queues/inventory/pause`, { method: 'PUT', headers: bearer });
    expect(pause.status).toBe(200);
    await fetch(`${s.url}/admin/queues/api/queues/inventory/resume`, { method: 'PUT', headers: bearer });
    const actions = s.logs.lines().filter((line) => line.audit === true).map((line) => line.action);
    expect(actions).toEqual(expect.arrayContaining(['dashboard:pause', 'dashboard:resume']));
  });

  it('never writes the admin token or password to the log', () => {
    expect(s.logs.text()).not.toContain(TOKEN);
    expect(s.logs.text()).not.toContain('admin-secret-pw');
  });
});

describe('HTTP server without admin credentials', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({});
  });
  afterAll(async () => {
    await s.close();
  });

  it('refuses /admin with 403 and says how to enable it, even with a token', async () => {
    for (const headers of [{}, bearer]) {
      const response = await fetch(`${s.url}/admin/queues`, { headers });
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: string }).error).toContain('ADMIN_TOKEN');
    }
  });

  it('still serves /livez and /metrics', async () => {
    expect((await fetch(`${s.url}/livez`)).status).toBe(200);
    expect((await fetch(`${s.url}/metrics`)).status).toBe(200);
  });
});

describe('HTTP server while Redis is unreachable', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ token: TOKEN }, { redisUrl: `redis://127.0.0.1:${await sparePort()}/0` });
  });
  afterAll(async () => {
    await s.close();
  });

  it('answers /readyz with 503 naming Redis', async () => {
    const response = await fetch(`${s.url}/readyz`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { checks: Record<string, { ok: boolean }> };
    expect(body.checks.redis?.ok).toBe(false);
  });

  it('still answers /metrics and /livez', async () => {
    expect((await fetch(`${s.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${s.url}/livez`)).status).toBe(200);
  });

  it('answers a resync with 503 instead of hanging', async () => {
    const response = await fetch(`${s.url}/admin/resync/inventory`, { method: 'POST', headers: bearer });
    expect(response.status).toBe(503);
  });
});
