import { Worker } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { QUEUE_NAMES } from '../../../src/queue/connection.js';
import { CRASH_RECOVERY, STALLED_LIMIT_REASON } from '../../../src/queue/crash-recovery.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import { createInventoryWorker } from '../../../src/sync/inventory/worker.js';
import { waitFor } from '../../../src/wait-for.js';
import { createHarness, type Harness, stage, writesOf } from './harness.js';

const items = ['CO-1', 'ST-1', 'CD-1', 'CD-2', 'VA-1', 'RL-1', 'RF-1', 'NF-1', 'LK-1', 'SC-1', 'SO-1', ...Array.from({ length: 60 }, (_, i) => `TW-${i}`)].map(
  (Code) => ({ Code, Stock: 1, Price: 100 }),
);

let h: Harness;
let rt: InventoryRuntime;
/** A worker with its own runtime, as a worker-role daemon runs it. */
interface RunningWorker {
  events: InventoryRuntime['events'];
  metrics: InventoryRuntime['metrics'];
  close(): Promise<void>;
}
const flows: RunningWorker[] = [];

beforeAll(async () => {
  h = await createHarness(items);
  rt = openInventoryRuntime(h.deps());
});

afterEach(async () => {
  await Promise.all(flows.splice(0).map((flow) => flow.close()));
  h.sim.faults.set({ failRate: 0, rate429: 0, latencyMs: 0 });
});

afterAll(async () => {
  await rt.close();
  await h.close();
});

async function startWorker(overrides: Record<string, unknown> = {}): Promise<RunningWorker> {
  const runtime = openInventoryRuntime(h.deps(overrides));
  const connection = runtime.connect();
  const worker = createInventoryWorker(runtime, connection);
  const flow = {
    events: runtime.events,
    metrics: runtime.metrics,
    async close() {
      await worker.close();
      connection.disconnect();
      await runtime.close();
    },
  };
  flows.push(flow);
  return flow;
}

/** The failed jobs of a SKU, once there are some (the job:done event comes just before the move). */
async function failedJobs(sku: string) {
  return waitFor(async () => {
    const jobs = (await rt.queue.getFailed()).filter((job) => job.name === sku);
    return jobs.length > 0 && jobs;
  });
}

describe('inventory worker', () => {
  it('sends ten changes staged before the worker starts as one PUT with the newest values', async () => {
    for (let version = 1; version <= 10; version++) await stage(rt, 'CO-1', { Stock: version * 10, Price: 100 + version }, version);
    const flow = await startWorker();
    // Ten jobs carry the SKU: the first to hold its lock sends, the others find nothing left to send.
    const outcomes: string[] = [];
    flow.events.on('inventory:job:done', (e) => e.sku === 'CO-1' && outcomes.push(e.outcome));
    await waitFor(() => outcomes.filter((outcome) => outcome !== 'deferred').length === 10, { message: 'ten jobs of CO-1 done' });
    expect(outcomes.filter((outcome) => outcome === 'completed')).toHaveLength(1);
    expect(writesOf(h.sim, 'CO-1')).toHaveLength(1);
    expect(writesOf(h.sim, 'CO-1')[0]?.fields).toEqual({ Stock: 100, Price: 110 });
  });

  it('does not write an older version that arrives after a newer one was applied', async () => {
    const flow = await startWorker();
    let done = flow.events.next('inventory:job:done', (e) => e.sku === 'ST-1');
    await stage(rt, 'ST-1', { Stock: 50 }, 200);
    expect((await done).outcome).toBe('completed');
    done = flow.events.next('inventory:job:done', (e) => e.sku === 'ST-1');
    await stage(rt, 'ST-1', { Stock: 30 }, 100);
    expect((await done).outcome).toBe('skipped');
    expect(writesOf(h.sim, 'ST-1').map((w) => w.fields)).toEqual([{ Stock: 50 }]);
    expect(h.sim.state.items.get('ST-1')?.item.Stock).toBe(50);
    expect((await rt.state.read('ST-1')).pending.size).toBe(0);
  });

  it('skips a value equal to what the store acknowledged, and resends it when forced', async () => {
    const flow = await startWorker();
    let done = flow.events.next('inventory:job:done', (e) => e.sku === 'CD-1');
    await stage(rt, 'CD-1', { Stock: 7 }, 1);
    expect((await done).outcome).toBe('completed');

    done = flow.events.next('inventory:job:done', (e) => e.sku === 'CD-1');
    await stage(rt, 'CD-1', { Stock: 7 }, 2);
    expect((await done).outcome).toBe('skipped');
    expect(writesOf(h.sim, 'CD-1')).toHaveLength(1);

    done = flow.events.next('inventory:job:done', (e) => e.sku === 'CD-1');
    await stage(rt, 'CD-1', { Stock: 7 }, 3, { force: true });
    expect((await done).outcome).toBe('completed');
    expect(writesOf(h.sim, 'CD-1')).toHaveLength(2);
  });

  it('resends a forced pending value of the same version (a reconcile repair) but not an older one', async () => {
    const flow = await startWorker();
    let done = flow.events.next('inventory:job:done', (e) => e.sku === 'CD-2');
    await stage(rt, 'CD-2', { Stock: 9 }, 5);
    await done;
    h.sim.upsertItem({ Code: 'CD-2', Stock: 1 });
    done = flow.events.next('inventory:job:done', (e) => e.sku === 'CD-2');
    await stage(rt, 'CD-2', { Stock: 9 }, 5, { entryForce: true });
    expect((await done).outcome).toBe('completed');
    expect(h.sim.state.items.get('CD-2')?.item.Stock).toBe(9);
    done = flow.events.next('inventory:job:done', (e) => e.sku === 'CD-2');
    await stage(rt, 'CD-2', { Stock: 2 }, 4, { entryForce: true });
    expect((await done).outcome).toBe('skipped');
    expect(writesOf(h.sim, 'CD-2')).toHaveLength(2);
  });

  it('fails a value the store would refuse without sending it, with the reason, and still sends the valid fields', async () => {
    const flow = await startWorker();
    const rejected = flow.events.next('inventory:job:done', (e) => e.sku === 'VA-1' && e.outcome === 'rejected');
    const completed = flow.events.next('inventory:job:done', (e) => e.sku === 'VA-1' && e.outcome === 'completed');
    await stage(rt, 'VA-1', { Stock: -4, Price: 55.5 }, 1);
    expect((await rejected).reason).toBe('SKU VA-1: field Stock = -4 breaks "integer 0 to 999999"');
    expect((await completed).fields).toEqual(['Price']);
    expect(writesOf(h.sim, 'VA-1').map((w) => w.fields)).toEqual([{ Price: 55.5 }]);
    const failed = await failedJobs('VA-1');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.failedReason).toContain('field Stock = -4');
    expect(failed[0]?.attemptsMade).toBe(1);
    expect((await flow.metrics.jobs.get()).values).toContainEqual(expect.objectContaining({ labels: { queue: 'inventory', outcome: 'rejected' }, value: 1 }));
    expect((await flow.metrics.erpRecordsRejected.get()).values).toContainEqual(
      expect.objectContaining({ labels: { source: 'test', reason: 'integer 0 to 999999' }, value: 1 }),
    );
    expect((await rt.state.read('VA-1')).pending.size).toBe(0);
  });

  it('pauses the queue on a 429 without spending an attempt, then sends once the store allows it', async () => {
    await rt.store.login();
    const flow = await startWorker();
    h.sim.faults.set({ rate429: 1 });
    const limited = flow.events.next('inventory:job:done', (e) => e.sku === 'RL-1' && e.outcome === 'rate_limited');
    const completed = flow.events.next('inventory:job:done', (e) => e.sku === 'RL-1' && e.outcome === 'completed');
    await stage(rt, 'RL-1', { Stock: 3 }, 1);
    await limited;
    expect(await rt.queue.getRateLimitTtl()).toBeGreaterThan(0);
    const [job] = (await rt.queue.getJobs(['waiting', 'active', 'prioritized'])).filter((j) => j.name === 'RL-1');
    expect(job?.attemptsMade).toBe(0);
    h.sim.faults.set({ rate429: 0 });
    await completed;
    expect(writesOf(h.sim, 'RL-1')).toHaveLength(1);
    expect((await rt.queue.getFailed()).filter((j) => j.name === 'RL-1')).toHaveLength(0);
  });

  it('retries a failing store with backoff and fails the job after the configured attempts', async () => {
    await rt.store.login();
    const flow = await startWorker();
    h.sim.faults.set({ failRate: 1 });
    const outcomes: string[] = [];
    flow.events.on('inventory:job:done', (e) => e.sku === 'RF-1' && outcomes.push(e.outcome));
    const failed = flow.events.next('inventory:job:done', (e) => e.sku === 'RF-1' && e.outcome === 'failed');
    await stage(rt, 'RF-1', { Stock: 8 }, 1);
    await failed;
    expect(outcomes).toEqual(['retried', 'retried', 'failed']);
    const [job] = await failedJobs('RF-1');
    expect(job?.attemptsMade).toBe(3);
    expect(writesOf(h.sim, 'RF-1')).toHaveLength(0);
    // The value stays pending, so retrying the failed job from the dashboard sends it.
    h.sim.faults.set({ failRate: 0 });
    const completed = flow.events.next('inventory:job:done', (e) => e.sku === 'RF-1' && e.outcome === 'completed');
    await job!.retry('failed');
    await completed;
    expect(writesOf(h.sim, 'RF-1')).toHaveLength(1);
  });

  it('fails a SKU unknown to the store at once with a clear reason', async () => {
    const flow = await startWorker();
    const failed = flow.events.next('inventory:job:done', (e) => e.sku === 'NOPE-1');
    await stage(rt, 'NOPE-1', { Stock: 1 }, 1);
    expect((await failed).outcome).toBe('failed');
    const [job] = await failedJobs('NOPE-1');
    expect(job?.failedReason).toBe('SKU NOPE-1: not found on the store (404); set inventory.createMissing to create unknown items');
    expect(job?.attemptsMade).toBe(1);
  });

  it('creates a SKU unknown to the store when createMissing is on', async () => {
    const flow = await startWorker({ inventory: { createMissing: true } });
    const done = flow.events.next('inventory:job:done', (e) => e.sku === 'NEW-1');
    await stage(rt, 'NEW-1', { Stock: 4, Price: 12.5, Name: 'New item' }, 1);
    expect((await done).outcome).toBe('completed');
    expect(writesOf(h.sim, 'NEW-1').map((w) => w.op)).toEqual(['create']);
    expect(h.sim.state.items.get('NEW-1')?.item).toMatchObject({ Stock: 4, Price: 12.5, Name: 'New item' });
  });

  it('holds back a job while another job writes the same SKU (a failed job retried from the dashboard), without using an attempt', async () => {
    const flow = await startWorker();
    expect(await rt.state.lock('LK-1', 'another-job', 60_000)).toBe(true);
    const deferred = flow.events.next('inventory:job:done', (e) => e.sku === 'LK-1' && e.outcome === 'deferred');
    await stage(rt, 'LK-1', { Stock: 6 }, 1);
    await deferred;
    expect(writesOf(h.sim, 'LK-1')).toHaveLength(0);
    const completed = flow.events.next('inventory:job:done', (e) => e.sku === 'LK-1' && e.outcome === 'completed');
    await rt.state.unlock('LK-1', 'another-job');
    await completed;
    expect(writesOf(h.sim, 'LK-1')).toHaveLength(1);
    const [job] = await waitFor(async () => {
      const jobs = (await rt.queue.getCompleted()).filter((j) => j.name === 'LK-1');
      return jobs.length > 0 && jobs;
    });
    expect(job?.attemptsMade).toBe(1);
  });

  it('never writes a change twice when two workers share the queue', async () => {
    // Slow answers keep both workers busy, so both take jobs.
    h.sim.faults.set({ latencyMs: 10 });
    const workers = [await startWorker(), await startWorker()];
    const skus = items.map((item) => item.Code).filter((code) => code.startsWith('TW-'));
    const completedBy = [0, 0];
    workers.forEach((flow, i) => flow.events.on('inventory:job:done', (e) => void (e.outcome === 'completed' && completedBy[i]!++)));
    for (const sku of skus) await stage(rt, sku, { Stock: 42 }, 1);
    // More changes to the same SKUs while the first jobs run.
    for (const sku of skus) await stage(rt, sku, { Stock: 43 }, 2);
    await waitFor(() => skus.every((sku) => h.sim.state.items.get(sku)?.item.Stock === 43), { message: 'every SKU at 43' });
    await waitFor(async () => (await rt.queue.getJobCounts('waiting', 'active', 'delayed')).active === 0);
    for (const sku of skus) {
      const stocks = writesOf(h.sim, sku).map((w) => w.fields.Stock);
      expect(stocks.length).toBeLessThanOrEqual(2);
      expect(new Set(stocks).size).toBe(stocks.length);
      expect(stocks.at(-1)).toBe(43);
    }
    expect(completedBy.every((count) => count > 0)).toBe(true);
  });

  it('runs a job whose workers died three times (stalled three times) instead of failing it', async () => {
    await stage(rt, 'SC-1', { Stock: 33 }, 1);
    // A worker that takes the job and "dies": its lock disappears, and the stalled check moves the job back.
    const dying = new Worker(QUEUE_NAMES.inventory, null, {
      connection: rt.connect(),
      prefix: h.prefix,
      autorun: false,
      ...CRASH_RECOVERY,
      stalledInterval: 50,
    });
    for (let death = 1; death <= 3; death++) {
      const job = await dying.getNextJob(`dead-${death}`, { block: false });
      expect(job?.name).toBe('SC-1');
      const stalled = new Promise((resolve) => dying.once('stalled', resolve));
      await rt.redis.del(`${h.prefix}:${QUEUE_NAMES.inventory}:${job?.id}:lock`);
      await dying.startStalledCheckTimer();
      await stalled;
    }
    await dying.close();
    const flow = await startWorker();
    const done = await flow.events.next('inventory:job:done', (e) => e.sku === 'SC-1');
    expect(done.outcome).toBe('completed');
    expect(writesOf(h.sim, 'SC-1').map((w) => w.fields)).toEqual([{ Stock: 33 }]);
    expect((await rt.queue.getFailed()).filter((job) => job.name === 'SC-1')).toEqual([]);
  });

  it('queues a SKU again when its job stalled out under another worker\'s limit, and sends it', async () => {
    await stage(rt, 'SO-1', { Stock: 44 }, 1);
    const [waiting] = (await rt.queue.getJobs(['waiting', 'prioritized'])).filter((job) => job.name === 'SO-1');
    // What the stalled check of a worker with BullMQ's default limit leaves on a job killed twice.
    await rt.redis.hset(`${h.prefix}:${QUEUE_NAMES.inventory}:${waiting?.id}`, 'defa', STALLED_LIMIT_REASON);
    const flow = await startWorker();
    const done = await flow.events.next('inventory:job:done', (e) => e.sku === 'SO-1');
    expect(done.outcome).toBe('completed');
    expect(writesOf(h.sim, 'SO-1').map((w) => w.fields)).toEqual([{ Stock: 44 }]);
    const [failed] = await failedJobs('SO-1');
    expect(failed?.failedReason).toBe(STALLED_LIMIT_REASON);
  });
});
