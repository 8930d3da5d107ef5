import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../../src/log.js';
import { closeWorkerWithin } from '../../../src/queue/worker-shutdown.js';
import { batchSizeFor, enqueueSkus, jobName, PRIORITY } from '../../../src/sync/inventory/enqueue.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import { jobSkus, type PendingEntry } from '../../../src/sync/inventory/types.js';
import { createInventoryWorker } from '../../../src/sync/inventory/worker.js';
import { waitFor } from '../../../src/wait-for.js';
import { createHarness, type Harness, writesOf } from './harness.js';

const codes = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);
const items = [...codes('BA', 40), ...codes('BN', 3), ...codes('BV', 3), ...codes('BT', 3), ...codes('BR', 12), ...codes('BL', 2), ...codes('BE', 3), ...codes('BS', 5), ...codes('BD', 4)].map(
  (Code) => ({ Code, Stock: 1, Price: 100 }),
);

let h: Harness;
let rt: InventoryRuntime;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  h = await createHarness(items);
  rt = openInventoryRuntime(h.deps());
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  h.sim.faults.set({ rate429: 0, latencyMs: 0, failingItemCodes: [] });
});

afterAll(async () => {
  await rt.close();
  await h.close();
});

async function startWorker(overrides: Record<string, unknown> = {}) {
  const runtime = openInventoryRuntime(h.deps(overrides));
  const connection = runtime.connect();
  const worker = createInventoryWorker(runtime, connection);
  closers.push(async () => {
    await worker.close();
    connection.disconnect();
    await runtime.close();
  });
  return Object.assign(runtime, { worker });
}

/** Merges values as the producer would, without queueing. */
async function pend(values: Record<string, Record<string, unknown>>, version = 1): Promise<void> {
  const entry = (value: unknown): PendingEntry => ({ value, version, at: Date.now(), source: 'test' });
  await rt.state.merge(Object.entries(values).map(([sku, fields]) => ({ sku, entries: Object.fromEntries(Object.entries(fields).map(([f, v]) => [f, entry(v)])) })));
}

/** The one job of a batch, once it is finished (completed or failed). */
async function finished(first: string) {
  return waitFor(async () => {
    const jobs = [...(await rt.queue.getCompleted()), ...(await rt.queue.getFailed())];
    return jobs.find((job) => job.name.startsWith(`${first} +`)) ?? false;
  });
}

async function failedJob(sku: string) {
  return waitFor(async () => (await rt.queue.getFailed()).find((job) => job.name === sku) ?? false, { message: `a failed job named ${sku}` });
}

describe('inventory batches', () => {
  it('sizes batches: a few SKUs spread over the worker slots, many in jobs of batchSize, never more', () => {
    expect(batchSizeFor(10, { batchSize: 50, spread: 16 })).toBe(1);
    expect(batchSizeFor(200, { batchSize: 50, spread: 16 })).toBe(13);
    expect(batchSizeFor(10_000, { batchSize: 50, spread: 16 })).toBe(50);
    expect(batchSizeFor(10_000, { batchSize: 1, spread: 16 })).toBe(1);
    expect(jobName(['A'])).toBe('A');
    expect(jobName(['A', 'B', 'C'])).toBe('A +2');
  });

  it('queues SKUs of different priorities in different jobs, the most urgent first, each SKU once', async () => {
    const skus = codes('Q', 120);
    const priorities = new Map(skus.map((sku, i) => [sku, i % 3 === 0 ? PRIORITY.decrease : PRIORITY.other]));
    await enqueueSkus(rt.queue, [...skus, ...skus], { priorities, batchSize: 50, spread: 2 });
    const jobs = (await rt.queue.getJobs(['prioritized'])).filter((job) => jobSkus(job.data).some((sku) => sku.startsWith('Q-')));
    try {
      expect(jobs.flatMap((job) => jobSkus(job.data)).sort()).toEqual([...skus].sort());
      for (const job of jobs) {
        expect(new Set(jobSkus(job.data).map((sku) => priorities.get(sku)))).toEqual(new Set([job.opts.priority]));
        expect(jobSkus(job.data).length).toBeLessThanOrEqual(50);
      }
      expect(jobs.filter((job) => job.opts.priority === PRIORITY.decrease).map((job) => jobSkus(job.data).length)).toEqual([20, 20]);
    } finally {
      await Promise.all(jobs.map((job) => job.remove()));
    }
  });

  it('writes forty SKUs with one job: each once, nothing left pending, the counts in the job result', async () => {
    const skus = codes('BA', 40);
    await pend(Object.fromEntries(skus.map((sku, i) => [sku, { Stock: 100 + i }])));
    await enqueueSkus(rt.queue, skus, { batchSize: 50, spread: 1 });
    await startWorker();
    const job = await finished('BA-1');
    expect(job.returnvalue).toEqual({ outcome: 'batch', skus: 40, counts: { completed: 40 }, isolated: [] });
    for (const [i, sku] of skus.entries()) {
      expect(writesOf(h.sim, sku).map((w) => w.fields)).toEqual([{ Stock: 100 + i }]);
      expect((await rt.state.read(sku)).pending.size).toBe(0);
    }
  });

  it('hands a SKU the store does not know to a job of its own, which fails with the reason; the rest of the batch is written', async () => {
    await pend({ 'BN-1': { Stock: 5 }, 'NOPE-B': { Stock: 6 }, 'BN-2': { Stock: 7 } });
    await enqueueSkus(rt.queue, ['BN-1', 'NOPE-B', 'BN-2'], { batchSize: 50, spread: 1 });
    const worker = await startWorker();
    const outcomes: string[] = [];
    worker.events.on('inventory:job:done', (e) => e.sku === 'NOPE-B' && outcomes.push(e.outcome));
    const job = await finished('BN-1');
    expect(job.returnvalue).toMatchObject({ outcome: 'batch', counts: { completed: 2, isolated: 1 }, isolated: ['NOPE-B'] });
    expect(writesOf(h.sim, 'BN-1')).toHaveLength(1);
    expect(writesOf(h.sim, 'BN-2')).toHaveLength(1);
    const failed = await failedJob('NOPE-B');
    expect(failed.failedReason).toBe('SKU NOPE-B: not found on the store (404); set inventory.createMissing to create unknown items');
    expect(jobSkus(failed.data)).toEqual(['NOPE-B']);
    expect(outcomes).toEqual(['isolated', 'failed']);
  });

  it('hands a value the store would refuse to a job of its own, which refuses it with the reason and sends nothing of it', async () => {
    await pend({ 'BV-1': { Stock: 2 }, 'BV-2': { Stock: -3 }, 'BV-3': { Stock: 4 } });
    await enqueueSkus(rt.queue, ['BV-1', 'BV-2', 'BV-3'], { batchSize: 50, spread: 1 });
    await startWorker();
    await finished('BV-1');
    const failed = await failedJob('BV-2');
    expect(failed.failedReason).toBe('SKU BV-2: field Stock = -3 breaks "integer 0 to 999999"');
    expect(writesOf(h.sim, 'BV-2')).toEqual([]);
    expect(writesOf(h.sim, 'BV-1')).toHaveLength(1);
    expect(writesOf(h.sim, 'BV-3')).toHaveLength(1);
    expect((await rt.state.read('BV-2')).pending.size).toBe(0);
  });

  it('retries a SKU the store fails on in a job of its own, until its attempts run out, while the batch completes', async () => {
    h.sim.faults.set({ failingItemCodes: ['BT-2'] });
    await pend({ 'BT-1': { Stock: 3 }, 'BT-2': { Stock: 3 }, 'BT-3': { Stock: 3 } });
    await enqueueSkus(rt.queue, ['BT-1', 'BT-2', 'BT-3'], { batchSize: 50, spread: 1 });
    const worker = await startWorker();
    const outcomes: string[] = [];
    worker.events.on('inventory:job:done', (e) => e.sku === 'BT-2' && outcomes.push(e.outcome));
    await finished('BT-1');
    const failed = await failedJob('BT-2');
    // The batch's try, then the attempts of its own job (3 in the tests' configuration).
    expect(outcomes).toEqual(['isolated', 'retried', 'retried', 'failed']);
    expect(failed.attemptsMade).toBe(3);
    expect(writesOf(h.sim, 'BT-1')).toHaveLength(1);
    expect(writesOf(h.sim, 'BT-3')).toHaveLength(1);
    // Still pending: retried from the dashboard once the store is fixed, it is written.
    h.sim.faults.set({ failingItemCodes: [] });
    const completed = worker.events.next('inventory:job:done', (e) => e.sku === 'BT-2' && e.outcome === 'completed');
    await failed.retry('failed');
    await completed;
    expect(writesOf(h.sim, 'BT-2')).toHaveLength(1);
  });

  it('gives a SKU that fails in every batch carrying it one job of its own, not one per batch', async () => {
    h.sim.faults.set({ failingItemCodes: ['BD-1'] });
    await pend({ 'BD-1': { Stock: 5 }, 'BD-2': { Stock: 5 }, 'BD-3': { Stock: 5 }, 'BD-4': { Stock: 5 } });
    for (const other of ['BD-2', 'BD-3', 'BD-4']) await enqueueSkus(rt.queue, ['BD-1', other], { batchSize: 50, spread: 1 });
    // Its own job waits 2 s before its first try: every batch has run by then.
    const worker = await startWorker({ inventory: { backoffMs: 2000 } });
    let isolated = 0;
    worker.events.on('inventory:job:done', (e) => {
      // Failed (isolated), or found locked by a batch running beside it (deferred): handed out either way.
      if (e.sku === 'BD-1' && (e.outcome === 'isolated' || e.outcome === 'deferred')) isolated += 1;
    });
    for (const first of ['BD-2', 'BD-3', 'BD-4']) await waitFor(() => writesOf(h.sim, first).length === 1, { message: `${first} written` });
    await waitFor(() => isolated === 3, { message: 'BD-1 handed out of three batches' });
    const own = (await rt.queue.getJobs(['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed'])).filter((job) => job.name === 'BD-1');
    expect(own.map((job) => jobSkus(job.data))).toEqual([['BD-1']]);
    await own[0]?.remove();
  });

  it('keeps the unsent SKUs of a batch in its job after a 429, without spending an attempt, and writes each once when the store allows', async () => {
    await rt.store.login();
    const skus = codes('BR', 12);
    await pend(Object.fromEntries(skus.map((sku) => [sku, { Price: 55.5 }])));
    h.sim.faults.set({ rate429: 1 });
    await enqueueSkus(rt.queue, skus, { batchSize: 50, spread: 1 });
    const worker = await startWorker();
    await worker.events.next('inventory:job:done', (e) => e.outcome === 'rate_limited');
    const [job] = (await rt.queue.getJobs(['waiting', 'prioritized', 'active'])).filter((j) => j.name === 'BR-1 +11');
    expect(job?.attemptsMade).toBe(0);
    expect(jobSkus(job!.data)).toEqual(skus);
    h.sim.faults.set({ rate429: 0 });
    await waitFor(() => skus.every((sku) => writesOf(h.sim, sku).length === 1), { timeoutMs: 15_000, message: 'every SKU written' });
    const done = await finished('BR-1');
    expect(done.attemptsMade).toBe(1);
    for (const sku of skus) expect(writesOf(h.sim, sku)).toHaveLength(1);
  });

  it('writes a SKU another job holds in a job of its own once that job lets go, and the rest of the batch at once', async () => {
    expect(await rt.state.lock('BL-1', 'another-job', 60_000)).toBe(true);
    await pend({ 'BL-1': { Stock: 8 }, 'BL-2': { Stock: 9 } });
    await enqueueSkus(rt.queue, ['BL-1', 'BL-2'], { batchSize: 50, spread: 1 });
    const worker = await startWorker();
    const job = await finished('BL-1');
    expect(job.returnvalue).toMatchObject({ counts: { completed: 1, deferred: 1 }, isolated: ['BL-1'] });
    expect(writesOf(h.sim, 'BL-2')).toHaveLength(1);
    expect(writesOf(h.sim, 'BL-1')).toHaveLength(0);
    const completed = worker.events.next('inventory:job:done', (e) => e.sku === 'BL-1' && e.outcome === 'completed');
    await rt.state.unlock('BL-1', 'another-job');
    await completed;
    expect(writesOf(h.sim, 'BL-1').map((w) => w.fields)).toEqual([{ Stock: 8 }]);
  });

  it('runs jobs queued by storesync 0.1, which name one sku', async () => {
    await pend({ 'BE-1': { Stock: 12 } });
    await rt.queue.add('BE-1', { sku: 'BE-1' }, { priority: PRIORITY.other });
    const worker = await startWorker();
    const done = await worker.events.next('inventory:job:done', (e) => e.sku === 'BE-1');
    expect(done.outcome).toBe('completed');
    expect(writesOf(h.sim, 'BE-1').map((w) => w.fields)).toEqual([{ Stock: 12 }]);
  });

  it('sends none of the SKUs still waiting for a slot once the shutdown deadline passes, and returns the batch to the queue', async () => {
    const skus = codes('BS', 5);
    await pend(Object.fromEntries(skus.map((sku) => [sku, { Stock: 21 }])));
    h.sim.faults.set({ latencyMs: 300 });
    const worker = await startWorker({ inventory: { concurrency: 1 } });
    // The returned job reports each of its SKUs at once (a burst `events.next` would miss), after its last run ended.
    const outcomes = new Map<string, string>();
    let jobEnded!: () => void;
    const ended = new Promise<void>((resolve) => (jobEnded = resolve));
    const stopListening = worker.events.on('inventory:job:done', (e) => {
      outcomes.set(e.sku, e.outcome);
      if (outcomes.size === skus.length) jobEnded();
    });
    const first = h.sim.events.next('inventory:write');
    await enqueueSkus(rt.queue, skus, { batchSize: 50, spread: 1 });
    await first;
    expect(await closeWorkerWithin(worker.worker, 10, silentLogger())).toBe('returned');
    const sentByDeadline = skus.filter((sku) => writesOf(h.sim, sku).length > 0);
    await ended;
    stopListening();
    // The PUT in flight at the deadline (one slot) finishes; nothing waiting for the slot is sent after it.
    const sent = skus.filter((sku) => writesOf(h.sim, sku).length > 0);
    expect(sent.length, `SKUs sent in all (${sentByDeadline.length} by the deadline, one slot)`).toBeLessThanOrEqual(sentByDeadline.length + 1);
    expect(skus.map((sku) => outcomes.get(sku))).toEqual(skus.map((sku) => (sent.includes(sku) ? 'completed' : 'deferred')));
    const [job] = (await rt.queue.getJobs(['waiting', 'prioritized'])).filter((j) => j.name === 'BS-1 +4');
    expect(job?.attemptsMade).toBe(0);
    h.sim.faults.set({ latencyMs: 0 });
    await startWorker();
    await waitFor(() => skus.every((sku) => writesOf(h.sim, sku).length === 1), { message: 'each SKU written once' });
  });
});
