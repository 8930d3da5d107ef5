import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

import { type Daemon, startDaemon } from '../src/daemon.js';
import { Metrics } from '../src/metrics.js';
import { type Simulator,startSimulator } from '../src/simulator/index.js';
import type { ControlActions } from '../src/sync/control/actions.js';
import { waitFor } from '../src/wait-for.js';
import { logCollector, testConfig, testPrefix } from './ops/helpers.js';
import { deleteKeys } from './support/redis.js';

const TOKEN = 'daemon-test-token-abcdef';
const redis = new Redis('redis://127.0.0.1:6379/0');
/** Each daemon's prefix is below the file's one, so one SCAN cleans up after all of them. */
const base = testPrefix();
let daemons = 0;
let sim: Simulator;
let daemon: Daemon | undefined;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});

afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
});

afterAll(async () => {
  await sim.close();
  await deleteKeys(redis, base);
  redis.disconnect();
});

function config(overrides: Record<string, unknown> = {}) {
  daemons += 1;
  const prefix = `${base}:d${daemons}`;
  return testConfig({
    redis: { prefix },
    store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1 },
    admin: { token: TOKEN },
    sales: { enabled: false },
    ...overrides,
  });
}

/** A reconcile that runs until `release()` or until its abort signal fires. */
function latchedActions() {
  let release: (() => void) | undefined;
  const started: string[] = [];
  const actions: ControlActions = {
    reconcile: ({ signal, skus }) =>
      new Promise((resolve) => {
        started.push(skus.join(','));
        release = () => resolve({ finished: true });
        signal.addEventListener('abort', () => resolve({ aborted: true }), { once: true });
      }),
    pullSales: async () => ({ pulled: 0 }),
  };
  return { actions, started, release: () => release?.() };
}

async function enqueueResync(d: Daemon, body: unknown): Promise<string> {
  const response = await fetch(`${d.url}/admin/resync/inventory`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { jobId: string }).jobId;
}

describe('storesync daemon', () => {
  it('starts every flow in the all role, serves health and metrics, and logs one start line without secrets', async () => {
    const logs = logCollector('info');
    daemon = await startDaemon({ config: config(), logger: logs.logger, metrics: new Metrics() }, { role: 'all' });
    expect(daemon.flows.map((flow) => flow.name)).toEqual(['control', 'inventory', 'sales', 'fulfillment']);
    const d = daemon;
    await waitFor(async () => (await fetch(`${d.url}/readyz`)).status === 200, { message: '/readyz to answer 200' });
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toContain('storesync_store_logins_total{outcome="success"}');
    expect(metrics).toMatch(/storesync_queue_jobs\{queue="inventory",state="waiting"\} \d+/);
    // Store records that did not fit on read are parked in store-rejects: a card of the dashboard, with its depth.
    expect(metrics).toMatch(/storesync_queue_jobs\{queue="store-rejects",state="failed"\} \d+/);
    const board = await fetch(`${d.url}/admin/queues/api/queues`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const cards = ((await board.json()) as { queues: Array<{ name: string; description?: string }> }).queues;
    expect(cards.find((queue) => queue.name === 'store-rejects')?.description).toMatch(/did not fit on read/);
    const start = logs.lines().filter((line) => line.msg === 'storesync started');
    expect(start).toHaveLength(1);
    expect(start[0]).toMatchObject({ role: 'all', http: d.url });
    expect(logs.text()).not.toContain('demo-password');
    expect(logs.text()).not.toContain(TOKEN);
  });

  it('is not ready while the store refuses the password: one error line, the auth failures counted, no login per probe', async () => {
    const logs = logCollector('info');
    const salesDir = mkdtempSync(join(tmpdir(), 'storesync-daemon-'));
    onTestFinished(() => rmSync(salesDir, { recursive: true, force: true }));
    const cfg = config({
      store: { baseUrl: sim.url, username: 'demo', password: 'wrong-password-d41', siteId: 1 },
      sales: { enabled: true, pull: { schedule: '* * * * * *' }, sink: { kind: 'file', dir: salesDir } },
    });
    daemon = await startDaemon({ config: cfg, logger: logs.logger }, { role: 'all' });
    const d = daemon;
    const before = sim.counters().failedLogins;
    // A scheduled pull meets the paused session: it fails without a login and without an error line of its own.
    const pullFailed = d.sales.events.next('sales:pull:failed');
    const ready = await fetch(`${d.url}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { checks: { store: { ok: boolean; error: string } } };
    expect(body.checks.store).toMatchObject({ ok: false, error: expect.stringMatching(/^ERR_STORE_AUTH: .*store traffic paused/) });
    // Asked again during the pause: still not ready, and no other login.
    expect((await fetch(`${d.url}/readyz`)).status).toBe(503);
    await pullFailed;
    expect(sim.counters().failedLogins - before).toBe(1);
    expect(await (await fetch(`${d.url}/metrics`)).text()).toContain('storesync_store_auth_failures_total 1');
    const errors = logs.lines().filter((line) => line.level === 'error');
    expect(errors.map((line) => line.msg)).toEqual([expect.stringMatching(/^store refused the credentials/)]);
    expect(logs.text()).not.toContain('wrong-password-d41');
  });

  it('runs no sales sync when no sales.sink is configured, even with the pull enabled, and says so once', async () => {
    const logs = logCollector('info');
    const cfg = config({ sales: { enabled: true, pull: { schedule: '* * * * * *' } } });
    expect(cfg.sales.sink).toBeNull();
    daemon = await startDaemon({ config: cfg, logger: logs.logger }, { role: 'all' });
    expect(daemon.sales.queues).toEqual([]);
    expect(daemon.sales.workers).toEqual([]);
    expect(logs.lines().filter((line) => line.msg === 'sales sync off: no sales.sink configured')).toHaveLength(1);
    expect(logs.lines().some((line) => line.msg === 'sales flow started')).toBe(false);
  });

  it('runs no workers in the producer role and still serves HTTP', async () => {
    daemon = await startDaemon({ config: config(), logger: logCollector().logger }, { role: 'producer' });
    expect(daemon.control.workers).toHaveLength(0);
    expect((await fetch(`${daemon.url}/livez`)).status).toBe(200);
  });

  it('processes control jobs in the worker role', async () => {
    const latch = latchedActions();
    daemon = await startDaemon({ config: config(), logger: logCollector().logger, controlActions: latch.actions }, { role: 'worker' });
    const d = daemon;
    const jobId = await enqueueResync(d, { skus: ['SKU-000001'] });
    await waitFor(() => latch.started.length === 1, { message: 'the job to start' });
    expect(latch.started).toEqual(['SKU-000001']);
    expect(await d.control.queue.getJobState(jobId)).toBe('active');
    latch.release();
    const job = await waitFor(
      async () => {
        const found = await d.control.queue.getJob(jobId);
        return found?.finishedOn ? found : undefined;
      },
      { message: 'the control job to finish' },
    );
    expect(job.failedReason).toBeUndefined();
    expect(job.returnvalue).toEqual({ finished: true });
  });

  it('lets a running job finish when it ends before the shutdown deadline', async () => {
    const latch = latchedActions();
    daemon = await startDaemon(
      { config: config({ shutdown: { timeoutMs: 20_000 } }), logger: logCollector().logger, controlActions: latch.actions },
      { role: 'all' },
    );
    const d = daemon;
    const jobId = await enqueueResync(d, { skus: ['A-1'] });
    await waitFor(() => latch.started.length === 1, { message: 'the job to start' });
    const closed = d.close();
    // The job is still running while the daemon waits for it.
    expect(await d.control.queue.getJobState(jobId)).toBe('active');
    latch.release();
    await closed;
    daemon = undefined;
    const key = `${d.control.queue.opts.prefix}:control:${jobId}`;
    expect(await redis.hget(key, 'returnvalue')).toBe(JSON.stringify({ finished: true }));
    expect(await redis.hget(key, 'finishedOn')).not.toBeNull();
  });

  it('returns a job still running at the shutdown deadline to the queue and resolves', async () => {
    const latch = latchedActions();
    const cfg = config({ shutdown: { timeoutMs: 300 } });
    daemon = await startDaemon({ config: cfg, logger: logCollector().logger, controlActions: latch.actions }, { role: 'all' });
    const d = daemon;
    const jobId = await enqueueResync(d, { skus: ['B-2'] });
    await waitFor(() => latch.started.length === 1, { message: 'the job to start' });
    await d.close();
    daemon = undefined;
    expect(await redis.lrange(`${cfg.redis.prefix}:control:wait`, 0, -1)).toContain(jobId);
    expect(await redis.hget(`${cfg.redis.prefix}:control:${jobId}`, 'failedReason')).toBeNull();
    expect(await redis.hget(`${cfg.redis.prefix}:control:${jobId}`, 'finishedOn')).toBeNull();
  });

  it('trims finished jobs to queue.removeOnComplete so Redis stays bounded', async () => {
    const actions: ControlActions = { reconcile: async () => ({ ok: true }), pullSales: async () => ({ ok: true }) };
    const cfg = config({ queue: { removeOnComplete: { age: 3600, count: 3 }, removeOnFail: { age: 3600, count: 3 } } });
    daemon = await startDaemon({ config: cfg, logger: logCollector().logger, controlActions: actions }, { role: 'all' });
    const d = daemon;
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) ids.push(await enqueueResync(d, { skus: [`SKU-${i}`] }));
    await waitFor(async () => (await d.control.queue.getJobState(ids.at(-1) as string)) === 'completed', { message: 'the last job' });
    const counts = await d.control.queue.getJobCounts('completed');
    expect(counts.completed).toBeLessThanOrEqual(3);
    for (const flow of d.flows) {
      // inventory-rejects and store-rejects jobs are born failed: their trimming is applied as they are failed.
      for (const queue of flow.queues.filter((q) => q.name !== 'inventory-rejects' && q.name !== 'store-rejects')) {
        expect(queue.defaultJobOptions.removeOnComplete, `${queue.name} removeOnComplete`).toEqual(cfg.queue.removeOnComplete);
        expect(queue.defaultJobOptions.removeOnFail, `${queue.name} removeOnFail`).toEqual(cfg.queue.removeOnFail);
      }
    }
  });
});
