import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { UnrecoverableError } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { FileSalesSink } from '../../../src/erp/sinks/file-sink.js';
import { QUEUE_NAMES, stateKey } from '../../../src/queue/connection.js';
import { StoreNotFoundError } from '../../../src/store/errors.js';
import { toJobError } from '../../../src/sync/job-errors.js';
import { exportOneSale, pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { waitFor } from '../../../src/wait-for.js';
import { listKeys } from '../../support/redis.js';
import { CountingSink, type Harness, type HarnessOptions, startHarness, updatesBySale } from './harness.js';

describe('sales flow', () => {
  let h: Harness;
  let dir: string;
  let sink: CountingSink;

  async function setUp(options: HarnessOptions = {}): Promise<void> {
    h = await startHarness(options);
    sink = new CountingSink(new FileSalesSink({ dir }));
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storesync-sales-'));
  });

  afterEach(async () => {
    await h?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs a worker until it acknowledged one sale. */
  const untilOneAcked = async (): Promise<void> => {
    const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
    try {
      await flow.events.next('sales:acked');
    } finally {
      await flow.close();
    }
  };

  const ackedCount = async (): Promise<number> => {
    const keys = await listKeys(h.redis, stateKey(h.prefix, 'sales', 1));
    const states = await Promise.all(keys.map((key) => h.redis.hget(key, 'state')));
    return states.filter((state) => state === 'acked').length;
  };

  it('keeps the store error class when the sale to export does not exist, so a 404 stays permanent', async () => {
    await setUp();
    const error = await exportOneSale(h.deps, 99_999, { sink }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreNotFoundError);
    expect(error).toMatchObject({ code: 'ERR_STORE_NOT_FOUND', retryable: false });
    expect((error as Error).message).toMatch(/99999: cannot read it from the store: GET /);
    expect(toJobError(error)).toBeInstanceOf(UnrecoverableError);
    expect(sink.exports.size).toBe(0);
  });

  it('exports each sale once and acknowledges it once across overlapping pulls and re-runs', async () => {
    await setUp();
    const ids = [1, 2, 3, 4, 5].map((n) => h.sim.addSale({ Id: 100 + n, SiteId: 1, Status: 1, CreationDate: h.storeDate(60 * n) }).Id);
    h.sim.addSale({ Id: 200, SiteId: 1, Status: 3, CreationDate: h.storeDate(30) });

    const first = await pullSales(h.deps);
    const overlapping = await pullSales(h.deps);
    expect(first).toMatchObject({ seen: 5, queued: 5, alreadyQueued: 0, done: 0 });
    expect(overlapping).toMatchObject({ seen: 5, queued: 0, alreadyQueued: 5 });

    const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
    try {
      await waitFor(async () => (await ackedCount()) === 5, { message: 'five sales acknowledged' });
      // Acknowledged sales left status 1; a pull that also reads status 2 finds them done.
      const rerun = await pullSales(h.deps, { statuses: [1, 2] });
      expect(rerun).toMatchObject({ seen: 5, queued: 0, done: 5 });
    } finally {
      await flow.close();
    }

    expect([...sink.exports.entries()].sort()).toEqual(ids.map((id) => [id, 1]));
    expect((await readdir(dir)).sort()).toEqual(ids.map((id) => `sale-1-${id}.json`));
    const updates = updatesBySale(h.sim);
    expect(updates.size).toBe(5);
    for (const id of ids) {
      expect(updates.get(id)).toEqual([expect.objectContaining({ Status: 2, StatusText: 'In process', Obeservations: expect.stringMatching(new RegExp(`ERP order 1-${id}$`)) })]);
    }
    expect(h.sim.state.salesById.get(200)!.sale.Status).toBe(3);
    expect(await h.metrics.oldestUnacknowledgedSale.get()).toMatchObject({ values: [{ value: 0 }] });
  });

  it('keeps the record of an acknowledged sale for sales.stateTtlDays', async () => {
    await setUp({ config: { sales: { stateTtlDays: 3 } } });
    h.sim.addSale({ Id: 601, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    await pullSales(h.deps);
    await untilOneAcked();
    const key = stateKey(h.prefix, 'sales', 1, 601);
    expect(await h.redis.hget(key, 'state')).toBe('acked');
    const ttl = await h.redis.ttl(key);
    // Set at the acknowledgement to 3 days (the default is 90); a few seconds may have gone by since.
    expect(ttl).toBeLessThanOrEqual(3 * 86_400);
    expect(ttl).toBeGreaterThan(3 * 86_400 - 60);
  });

  it('runs the scheduled pull and exports what it queued when producer and worker run together', async () => {
    await setUp({ config: { sales: { pull: { schedule: '* * * * * *' } } } });
    h.sim.addSale({ Id: 151, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    const flow = await startSalesFlow(h.deps, { role: 'all', sink });
    try {
      const acked = flow.events.next('sales:acked');
      expect(await flow.events.next('sales:pull:done')).toMatchObject({ seen: 1, queued: 1 });
      await acked;
    } finally {
      await flow.close();
    }
    expect(sink.exports.get(151)).toBe(1);
    expect(updatesBySale(h.sim).get(151)).toHaveLength(1);
  });

  it('retries a failed acknowledgement on its own: one export, one acknowledgement', async () => {
    await setUp();
    h.sim.addSale({ Id: 301, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    await pullSales(h.deps);
    const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
    // The store breaks right after the export is recorded, so the acknowledgement fails.
    flow.events.on('sales:exported', () => h.sim.faults.set({ failRate: 1 }));
    flow.events.on('sales:job:failed', () => h.sim.faults.set({ failRate: 0 }));
    try {
      const failed = flow.events.next('sales:job:failed');
      const acked = flow.events.next('sales:acked');
      expect((await failed).willRetry).toBe(true);
      expect(await acked).toEqual({ saleId: 301, siteId: 1, erpRef: '1-301' });
    } finally {
      await flow.close();
    }
    expect(sink.exports.get(301)).toBe(1);
    expect(updatesBySale(h.sim).get(301)).toHaveLength(1);
  });

  it('completes the acknowledgement after a restart when the worker stopped between export and ack', async () => {
    await setUp();
    h.sim.addSale({ Id: 302, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    await pullSales(h.deps);
    const first = await startSalesFlow(h.deps, { role: 'worker', sink });
    first.events.on('sales:exported', () => h.sim.faults.set({ failRate: 1 }));
    await first.events.next('sales:job:failed');
    await first.close();
    expect(await h.redis.hget(stateKey(h.prefix, 'sales', 1, 302), 'state')).toBe('exported');

    h.sim.faults.set({ failRate: 0 });
    const second = await startSalesFlow(h.deps, { role: 'worker', sink });
    try {
      await second.events.next('sales:acked');
    } finally {
      await second.close();
    }
    expect(sink.exports.get(302)).toBe(1);
    expect(updatesBySale(h.sim).get(302)).toHaveLength(1);
  });

  it('re-exports as a no-op when the process died after the ERP took the sale but before it was recorded', async () => {
    await setUp();
    h.sim.addSale({ Id: 303, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    sink.crashAfterExport.add(303);
    await pullSales(h.deps);
    await untilOneAcked();
    // Two calls reached the sink, but the second found the file: one export, one acknowledgement.
    expect(sink.exports.get(303)).toBe(2);
    expect(await readdir(dir)).toEqual(['sale-1-303.json']);
    expect(updatesBySale(h.sim).get(303)).toHaveLength(1);
  });

  it('does not acknowledge twice when the process died after the store took the acknowledgement', async () => {
    await setUp();
    h.sim.addSale({ Id: 304, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    await pullSales(h.deps);
    // The first run exports; its acknowledgement fails, so the state says "exported".
    const first = await startSalesFlow(h.deps, { role: 'worker', sink });
    first.events.on('sales:exported', () => h.sim.faults.set({ failRate: 1 }));
    await first.events.next('sales:job:failed');
    await first.close();
    expect(await h.redis.hget(stateKey(h.prefix, 'sales', 1, 304), 'state')).toBe('exported');
    // What a worker killed right after the store took its acknowledgement leaves behind: the store has
    // the acknowledgement, Redis still says "exported".
    h.sim.faults.set({ failRate: 0 });
    const erpRef = String(await h.redis.hget(stateKey(h.prefix, 'sales', 1, 304), 'erpRef'));
    await h.deps.store.sales.update(304, { Status: 2, Obeservations: `ERP order ${erpRef}` });
    expect(updatesBySale(h.sim).get(304)).toHaveLength(1);

    const second = await startSalesFlow(h.deps, { role: 'worker', sink });
    try {
      await second.events.next('sales:acked');
    } finally {
      await second.close();
    }
    expect(await h.redis.hget(stateKey(h.prefix, 'sales', 1, 304), 'state')).toBe('acked');
    expect(sink.exports.get(304)).toBe(1);
    expect(updatesBySale(h.sim).get(304)).toHaveLength(1);
  });

  it('keeps a status the sale moved on to while its acknowledgement was failing, writing only the observation', async () => {
    await setUp();
    h.sim.addSale({ Id: 305, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    await pullSales(h.deps);
    const first = await startSalesFlow(h.deps, { role: 'worker', sink });
    first.events.on('sales:exported', () => h.sim.faults.set({ failRate: 1 }));
    await first.events.next('sales:job:failed');
    await first.close();
    // Meanwhile the ERP shipped it and the shipment reached the store.
    h.sim.faults.set({ failRate: 0 });
    await h.deps.store.sales.update(305, { Status: 3, StatusText: 'Completed', TrackingCode: 'TRK-305' });

    const second = await startSalesFlow(h.deps, { role: 'worker', sink });
    try {
      await second.events.next('sales:acked');
    } finally {
      await second.close();
    }
    const updates = updatesBySale(h.sim).get(305) ?? [];
    expect(updates).toHaveLength(2);
    // The complete structure: the status and tracking code the sale moved on to are sent back as they are.
    expect(updates[1]).toMatchObject({ Status: 3, StatusText: 'Completed', TrackingCode: 'TRK-305' });
    expect(updates[1]!.Obeservations).toMatch(/ERP order 1-305$/);
    expect(await h.deps.store.sales.get(305)).toMatchObject({ Status: 3, TrackingCode: 'TRK-305' });
  });

  it('skips sales younger than the settle delay and takes them on a later pull', async () => {
    let clock = Date.now();
    await setUp({ now: () => clock, config: { sales: { pull: { settleMinutes: 10 } } } });
    h.sim.addSale({ Id: 401, SiteId: 1, Status: 1, CreationDate: h.storeDate(30) });
    h.sim.addSale({ Id: 402, SiteId: 1, Status: 1, CreationDate: h.storeDate(3) });
    expect(await pullSales(h.deps)).toMatchObject({ seen: 2, queued: 1, skippedSettling: 1 });
    clock += 8 * 60_000;
    expect(await pullSales(h.deps)).toMatchObject({ seen: 2, queued: 1, alreadyQueued: 1, skippedSettling: 0 });
  });

  it('pulls a sale created at 23:30 local time when UTC has already moved to the next day', async () => {
    // 02:45 UTC on March 15 is 23:45 on March 14 in Buenos Aires.
    const clock = Date.UTC(2024, 2, 15, 2, 45);
    await setUp({ now: () => clock, config: { sales: { pull: { lookbackHours: 1 } } } });
    h.sim.addSale({ Id: 501, SiteId: 1, Status: 1, CreationDate: '03/14/2024 23:30:00' });
    const report = await pullSales(h.deps);
    expect(report).toMatchObject({ from: '2024-03-14', to: '2024-03-15', seen: 1, queued: 1 });
  });

  it('keeps the watermark in UTC and widens the next window back to it after downtime', async () => {
    let clock = Date.UTC(2024, 2, 15, 12, 0);
    await setUp({ now: () => clock, config: { sales: { pull: { lookbackHours: 24 } } } });
    await pullSales(h.deps);
    expect(await h.redis.get(stateKey(h.prefix, 'sales', 'watermark', 1))).toBe('2024-03-15T12:00:00.000Z');
    clock = Date.UTC(2024, 2, 19, 12, 0);
    h.sim.addSale({ Id: 601, SiteId: 1, Status: 1, CreationDate: '03/15/2024 10:00:00' });
    const report = await pullSales(h.deps);
    expect(report).toMatchObject({ from: '2024-03-14', to: '2024-03-20', queued: 1 });
    // A pull of a chosen window does not move the watermark.
    await pullSales(h.deps, { from: '2024-01-01', to: '2024-01-02' });
    expect(await h.redis.get(stateKey(h.prefix, 'sales', 'watermark', 1))).toBe('2024-03-19T12:00:00.000Z');
  });

  it('pages through 350 sales 50 at a time and queues each once', async () => {
    await setUp({ config: { sales: { pull: { pageSize: 50 } } } });
    for (let n = 0; n < 350; n++) h.sim.addSale({ Id: 1000 + n, SiteId: 1, Status: 1, CreationDate: h.storeDate(n) });
    h.sim.resetCounters();
    const report = await pullSales(h.deps);
    expect(report).toMatchObject({ seen: 350, queued: 350 });
    expect(h.sim.counters().requests['GET /Api/Sale']).toBe(8);
    const queue = (await import('bullmq')).Queue;
    const q = new queue(QUEUE_NAMES.sales, { connection: h.redis, prefix: h.prefix });
    try {
      expect(await q.getWaitingCount()).toBe(350);
    } finally {
      await q.close();
    }
  });

  it('lists what a dry run would export and writes nothing', async () => {
    await setUp();
    const creationDate = h.storeDate(10);
    h.sim.addSale({ Id: 701, SiteId: 1, Status: 1, CreationDate: creationDate, Total: 99.5 });
    const report = await pullSales(h.deps, { dryRun: true });
    expect(report).toMatchObject({ dryRun: true, seen: 1, queued: 1 });
    expect(report.sales).toEqual([{ saleId: 701, siteId: 1, status: 1, creationDate, total: 99.5, action: 'export' }]);
    // Only BullMQ's queue metadata, written when the queue is opened: no job, no state, no watermark.
    expect(await listKeys(h.redis, h.prefix)).toEqual([`${h.prefix}:sales:meta`]);
  });

  it('pulls sales by external reference whatever their status', async () => {
    await setUp();
    h.sim.addSale({ Id: 801, SiteId: 1, Status: 3, ExternalReference: 'ML-801', CreationDate: h.storeDate(10) });
    h.sim.addSale({ Id: 802, SiteId: 1, Status: 1, ExternalReference: 'ML-802', CreationDate: h.storeDate(10) });
    const report = await pullSales(h.deps, { externalReferences: ['ML-801'] });
    expect(report).toMatchObject({ from: null, seen: 1, queued: 1 });
  });

  it('shows the age of the oldest unacknowledged sale and drops it to zero once acknowledged', async () => {
    let clock = Date.now();
    await setUp({ now: () => clock });
    h.sim.addSale({ Id: 901, SiteId: 1, Status: 1, CreationDate: h.storeDate(90) });
    await pullSales(h.deps);
    const age = (await h.metrics.oldestUnacknowledgedSale.get()).values[0]!.value;
    expect(age).toBeGreaterThanOrEqual(90 * 60 - 1);
    expect(age).toBeLessThanOrEqual(90 * 60 + 1);
    clock += 1000;
    await exportOneSale(h.deps, 901, { sink });
    expect((await h.metrics.oldestUnacknowledgedSale.get()).values[0]!.value).toBe(0);
  });

  it('exports one sale on demand and, forced, exports again without a second acknowledgement', async () => {
    await setUp();
    h.sim.addSale({ Id: 951, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    expect(await exportOneSale(h.deps, 951, { sink })).toEqual({ saleId: 951, siteId: 1, erpRef: '1-951', exported: true, acked: true });
    expect(await exportOneSale(h.deps, 951, { sink })).toEqual({ saleId: 951, siteId: 1, erpRef: '1-951', exported: false, acked: false });
    await rm(join(dir, 'sale-1-951.json'));
    expect(await exportOneSale(h.deps, 951, { sink, force: true })).toEqual({ saleId: 951, siteId: 1, erpRef: '1-951', exported: true, acked: false });
    expect(await readdir(dir)).toEqual(['sale-1-951.json']);
    expect(updatesBySale(h.sim).get(951)).toHaveLength(1);
  });

  it('exports without touching the store sale when acknowledgements are disabled', async () => {
    await setUp({ config: { sales: { ack: { enabled: false } } } });
    h.sim.addSale({ Id: 961, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    expect(await exportOneSale(h.deps, 961, { sink })).toMatchObject({ exported: true, acked: false });
    expect(h.sim.saleUpdates).toHaveLength(0);
    expect(await pullSales(h.deps)).toMatchObject({ seen: 1, queued: 0, done: 1 });
  });

  it('fails a job at once, without using its attempts, when the sale no longer exists', async () => {
    await setUp();
    h.sim.addSale({ Id: 971, SiteId: 1, Status: 1, CreationDate: h.storeDate(10) });
    await pullSales(h.deps);
    h.sim.state.salesById.delete(971);
    const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
    try {
      const failed = await flow.events.next('sales:job:failed');
      expect(failed.willRetry).toBe(false);
      expect(failed.error.message).toMatch(/^ERR_STORE_NOT_FOUND: sale 1-971: cannot read it from the store: /);
    } finally {
      await flow.close();
    }
    expect(sink.exports.size).toBe(0);
  });
});
