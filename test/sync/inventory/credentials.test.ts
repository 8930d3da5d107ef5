/**
 * Refused store credentials with real workers: every change queued meanwhile is held (none fails), the
 * store sees at most `store.maxLoginsPerMinute` logins however many workers are busy, and a process
 * started with the right password sends every change.
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Metrics } from '../../../src/metrics.js';
import { StoreClient } from '../../../src/store/client.js';
import type { LoginGate } from '../../../src/store/login-gate.js';
import { storeLoginGate } from '../../../src/store/redis-login-gate.js';
import { enqueueSkus } from '../../../src/sync/inventory/enqueue.js';
import { openInventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import type { PendingEntry } from '../../../src/sync/inventory/types.js';
import { createInventoryWorker } from '../../../src/sync/inventory/worker.js';
import { waitFor } from '../../../src/wait-for.js';
import { logCollector } from '../../ops/helpers.js';
import { dumpPrefix } from '../../support/redis.js';
import { createHarness, type Harness } from './harness.js';

const SKUS = Array.from({ length: 200 }, (_, i) => `SKU-${String(i + 1).padStart(6, '0')}`);
const WRONG = 'wrong-password-7fd2';

let h: Harness;
const running: Array<{ close(): Promise<void> }> = [];

// A harness per test: the queue, its pause and the login budget of one test never reach the next.
beforeEach(async () => {
  h = await createHarness(SKUS.length);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((process) => process.close()));
  await h.close();
});

/** A worker process of its own (store client, login gate, connections) on the harness's prefix. */
function startProcess(password: string, settings: { store: Record<string, unknown>; inventory: Record<string, unknown> }) {
  const logs = logCollector('info');
  const base = h.deps({ ...settings, store: { ...settings.store, password } });
  const connections: Redis[] = [];
  const connect = (): Redis => {
    const connection = base.connect();
    connections.push(connection);
    return connection;
  };
  const gate = storeLoginGate(base.config.store, base.config.redis.prefix, connect);
  const budgetWaits = { count: 0 };
  const countingGate: LoginGate = {
    tryAcquire: async () => {
      const admission = await gate.tryAcquire();
      if ('reason' in admission && admission.reason === 'budget') budgetWaits.count += 1;
      return admission;
    },
  };
  const metrics = new Metrics({ defaultMetrics: false });
  const store = new StoreClient({ config: base.config.store, logger: logs.logger, metrics, loginGate: countingGate });
  const rt = openInventoryRuntime({ ...base, store, logger: logs.logger, metrics, connect });
  const outcomes = new Map<string, number>();
  rt.events.on('inventory:job:done', (event) => outcomes.set(event.outcome, (outcomes.get(event.outcome) ?? 0) + 1));
  const worker: Worker = createInventoryWorker(rt, connect());
  const process = {
    rt,
    logs,
    metrics,
    outcomes,
    budgetWaits,
    async close() {
      await worker.close();
      await rt.close();
      await store.close();
      for (const connection of connections) connection.disconnect();
    },
  };
  running.push(process);
  return process;
}

/** Stages a new Stock for every SKU and queues them as a poll would, in batches over 8 jobs. */
async function changeAll(rt: ReturnType<typeof openInventoryRuntime>, stock: number): Promise<void> {
  const version = Date.now();
  const entry = (): PendingEntry => ({ value: stock, version, at: Date.now(), source: 'test' });
  await rt.state.merge(SKUS.map((sku) => ({ sku, entries: { Stock: entry() } })));
  await enqueueSkus(rt.queue, SKUS, { batchSize: 25, spread: 8 });
}

async function jobsOf(rt: ReturnType<typeof openInventoryRuntime>) {
  return rt.queue.getJobs(['waiting', 'prioritized', 'active', 'delayed', 'failed']);
}

describe('inventory under refused store credentials', () => {
  it('bounds the logins of 8 busy workers in two processes by maxLoginsPerMinute, and holds every job', async () => {
    // A backoff of 1 ms: without the budget the sessions would log in as fast as the jobs come back.
    const settings = { store: { maxLoginsPerMinute: 3, loginBackoff: { baseDelayMs: 1, maxDelayMs: 1 } }, inventory: { concurrency: 4, batchSize: 25 } };
    const before = h.sim.counters();
    const a = startProcess(WRONG, settings);
    const b = startProcess(WRONG, settings);
    await changeAll(a.rt, 11);
    // Both processes asked for a login past the budget (and were told to wait): they wanted more logins.
    await waitFor(() => a.budgetWaits.count > 0 && b.budgetWaits.count > 0, { message: 'both processes to meet the spent login budget' });
    const after = h.sim.counters();
    expect(after.failedLogins - before.failedLogins).toBe(3);
    expect(after.total - before.total).toBe(3);
    expect(h.sim.writes).toHaveLength(0);
    const jobs = await jobsOf(a.rt);
    expect(jobs.filter((job) => job.failedReason !== undefined && job.finishedOn !== undefined)).toEqual([]);
    expect(jobs.every((job) => job.attemptsMade === 0)).toBe(true);
    expect((a.outcomes.get('auth_paused') ?? 0) + (b.outcomes.get('auth_paused') ?? 0)).toBeGreaterThan(0);
    expect([...a.outcomes.keys(), ...b.outcomes.keys()].every((outcome) => outcome === 'auth_paused')).toBe(true);
    // Neither the password nor anything derived from it is kept in Redis.
    const dump = [...(await dumpPrefix(a.rt.redis, h.prefix))].flat().join('\n');
    expect(dump).not.toContain(WRONG);
    expect(dump).toContain(`${h.prefix}:store-login:window`);
  });

  it('holds 200 SKUs changed under a wrong password, failing none, and a process with the right password sends them all', async () => {
    const settings = { store: { loginBackoff: { baseDelayMs: 200, maxDelayMs: 400 } }, inventory: { concurrency: 8, batchSize: 25 } };
    const wrong = startProcess(WRONG, settings);
    const before = h.sim.counters();
    await changeAll(wrong.rt, 42);
    // Every SKU was held at least once, and the jobs came back after the pause and were held again.
    await waitFor(() => (wrong.outcomes.get('auth_paused') ?? 0) >= SKUS.length && h.sim.counters().failedLogins - before.failedLogins >= 2, {
      message: 'all SKUs held, and a second refused login',
    });
    expect(h.sim.writes.filter((write) => write.fields.Stock === 42)).toHaveLength(0);
    expect([...wrong.outcomes.keys()]).toEqual(['auth_paused']);
    const jobs = await jobsOf(wrong.rt);
    expect(jobs.filter((job) => job.finishedOn !== undefined)).toEqual([]);
    expect(jobs.every((job) => job.attemptsMade === 0)).toBe(true);
    // One error line for the pause; no line per job or per SKU.
    const lines = wrong.logs.lines();
    expect(lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual([
      expect.stringMatching(/^store refused the credentials \(store.username, store.password\): store traffic paused/),
    ]);
    expect(lines.filter((line) => String(line.msg).includes('handed to a job of its own'))).toEqual([]);
    // One warning per further refusal (bounded by the backoff), none per job.
    for (const line of lines.filter((l) => l.level === 'warn')) expect(line.msg).toMatch(/^store refused the credentials again/);
    expect(await wrong.metrics.render()).toMatch(/storesync_store_auth_failures_total [2-9]/);
    await wrong.close();
    running.splice(running.indexOf(wrong), 1);

    const right = startProcess('demo-password', settings);
    await waitFor(() => new Set(h.sim.writes.filter((write) => write.fields.Stock === 42).map((write) => write.code)).size === SKUS.length, {
      message: 'all 200 SKUs written',
      timeoutMs: 30_000,
    });
    expect((await right.rt.queue.getFailed()).length).toBe(0);
    expect(right.outcomes.get('failed') ?? 0).toBe(0);
  });
});
