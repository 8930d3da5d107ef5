/**
 * The sales pull over the sites of `inventory.sites` (issue 20): each site read with its own `siteId`
 * filter and its own watermark, a sale keyed by the site it was read from, reservations under that
 * site, and a site the store fails on costing the others nothing. The simulator over HTTP, real Redis.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { FileSalesSink } from '../../../src/erp/sinks/file-sink.js';
import { stateKey } from '../../../src/queue/connection.js';
import { StoreLoginRefusedError, StoreServerError } from '../../../src/store/errors.js';
import { exportOneSale, pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { runPull } from '../../../src/sync/sales/pull.js';
import { openSalesRuntime, type SalesRuntime } from '../../../src/sync/sales/runtime.js';
import { type Harness, type HarnessOptions, startHarness } from './harness.js';

const SITES = { inventory: { sites: [{ siteId: 1 }, { siteId: 2 }, { siteId: 3 }] } };

describe('sales pull over inventory.sites', () => {
  let h: Harness | undefined;
  let rt: SalesRuntime | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await rt?.close();
    rt = undefined;
    await h?.close();
    h = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function setUp(config: Record<string, unknown> = SITES, options: HarnessOptions = {}): Promise<{ h: Harness; rt: SalesRuntime }> {
    h = await startHarness({ ...options, config });
    rt = openSalesRuntime(h.deps);
    return { h, rt };
  }

  /** Adds a status-1 sale an hour old on `siteId`. */
  function sale(harness: Harness, id: number, siteId: number, items?: Array<{ Code: string; Quantity: number }>): void {
    harness.sim.addSale({ Id: id, SiteId: siteId, Status: 1, CreationDate: harness.storeDate(60), ...(items ? { Items: items } : {}) });
  }

  async function queuedJobIds(runtime: SalesRuntime): Promise<string[]> {
    const jobs = await runtime.queue.getJobs(['waiting', 'active', 'delayed', 'failed', 'completed']);
    return jobs.map((job) => job.id ?? '').sort();
  }

  async function watermarks(runtime: SalesRuntime, sites: number[]): Promise<Array<number | null>> {
    return Promise.all(sites.map((site) => runtime.state.watermark(site)));
  }

  it('queues the sales of every site once, keyed by the site read, and moves each site\'s own watermark', async () => {
    const { h, rt } = await setUp();
    sale(h, 101, 1);
    sale(h, 102, 2);
    sale(h, 103, 3);
    sale(h, 104, 2);
    // A site not configured is not read.
    sale(h, 105, 4);

    const dry = await runPull(rt, { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, siteId: null, siteIds: [1, 2, 3], seen: 4, queued: 4 });
    expect(dry.sales.map((s) => [s.siteId, s.saleId, s.action])).toEqual([
      [1, 101, 'export'],
      [2, 102, 'export'],
      [2, 104, 'export'],
      [3, 103, 'export'],
    ]);
    expect(await queuedJobIds(rt)).toEqual([]);
    expect(await watermarks(rt, [0, 1, 2, 3])).toEqual([null, null, null, null]);

    const first = await runPull(rt);
    expect(first).toMatchObject({ siteId: null, siteIds: [1, 2, 3], seen: 4, queued: 4, alreadyQueued: 0, skippedSite: 0 });
    expect(await queuedJobIds(rt)).toEqual(['sale-1-101', 'sale-2-102', 'sale-2-104', 'sale-3-103']);
    const job = await rt.queue.getJob('sale-2-104');
    expect(job?.data).toMatchObject({ siteId: 2, saleId: 104 });
    expect(job?.name).toBe('sale:2:104');

    const marks = await watermarks(rt, [1, 2, 3]);
    expect(marks.every((mark) => mark !== null)).toBe(true);
    // Per site: nothing under the key of a pull without a site filter.
    expect(await rt.state.watermark(0)).toBeNull();

    const second = await runPull(rt);
    expect(second).toMatchObject({ siteIds: [1, 2, 3], seen: 4, queued: 0, alreadyQueued: 4 });
    expect(await queuedJobIds(rt)).toHaveLength(4);
  });

  it('reads store.siteId too when inventory.sites does not list it, after the listed sites', async () => {
    const { h, rt } = await setUp({ inventory: { sites: [{ siteId: 2 }, { siteId: 3 }] } });
    sale(h, 201, 1);
    sale(h, 202, 2);
    sale(h, 203, 3);
    const report = await runPull(rt);
    expect(report).toMatchObject({ siteIds: [2, 3, 1], queued: 3 });
    expect(await queuedJobIds(rt)).toEqual(['sale-1-201', 'sale-2-202', 'sale-3-203']);
    expect((await watermarks(rt, [1, 2, 3])).every((mark) => mark !== null)).toBe(true);
  });

  it('keeps the one-site pull when sales.pull.siteId is set (one puller per site)', async () => {
    const { h, rt } = await setUp({ ...SITES, sales: { pull: { siteId: 2 } } });
    sale(h, 301, 1);
    sale(h, 302, 2);
    sale(h, 303, 3);
    expect(await runPull(rt)).toMatchObject({ siteId: 2, siteIds: [2], seen: 1, queued: 1 });
    expect(await queuedJobIds(rt)).toEqual(['sale-2-302']);
    expect(await watermarks(rt, [1, 2, 3])).toEqual([null, expect.any(Number), null]);
  });

  it('pulls by external reference on every site, each sale under its own site', async () => {
    const { h, rt } = await setUp();
    sale(h, 401, 1);
    sale(h, 402, 2);
    sale(h, 403, 3);
    const report = await runPull(rt, { externalReferences: ['WEB-2-0000402', 'WEB-3-0000403'] });
    expect(report).toMatchObject({ siteIds: [1, 2, 3], from: null, to: null, seen: 2, queued: 2 });
    expect(await queuedJobIds(rt)).toEqual(['sale-2-402', 'sale-3-403']);
    // A pull by reference moves no watermark.
    expect(await watermarks(rt, [1, 2, 3])).toEqual([null, null, null]);
  });

  it('reserves a site-2 sale\'s lines under site 2', async () => {
    const { h, rt } = await setUp();
    const [code] = [...h.sim.state.items.keys()] as [string];
    sale(h, 501, 2, [{ Code: code, Quantity: 3 }]);
    sale(h, 502, 1, [{ Code: code, Quantity: 1 }]);
    await runPull(rt);

    const reservations = rt.reservations!.store;
    expect(await reservations.sale({ siteId: 2, saleId: 501 })).toMatchObject({ state: 'open', lines: { [code]: 3 } });
    expect(await reservations.sale({ siteId: 1, saleId: 501 })).toBeNull();
    expect(await reservations.sale({ siteId: 1, saleId: 502 })).toMatchObject({ state: 'open', lines: { [code]: 1 } });
    const entries = (await reservations.forSku(code)).entries.map((e) => [e.siteId, e.saleId, e.quantity]);
    expect(entries.sort()).toEqual([
      [1, 502, 1],
      [2, 501, 3],
    ]);
  });

  it('queues the other sites when the store fails on one, leaves that site\'s watermark, then throws naming it', async () => {
    const { h, rt } = await setUp();
    sale(h, 601, 1);
    sale(h, 602, 2);
    sale(h, 603, 3);
    h.sim.faults.set({ failingSaleSiteIds: [2] });

    const error = await runPull(rt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreServerError);
    expect(error).toMatchObject({ code: 'ERR_STORE_SERVER', retryable: true });
    expect((error as Error).message).toMatch(/^sales pull of site 2 failed \(sites 1, 3 pulled, 2 queued\): /);
    expect(await queuedJobIds(rt)).toEqual(['sale-1-601', 'sale-3-603']);
    expect(await watermarks(rt, [1, 2, 3])).toEqual([expect.any(Number), null, expect.any(Number)]);

    h.sim.faults.set({ failingSaleSiteIds: [] });
    expect(await runPull(rt)).toMatchObject({ siteIds: [1, 2, 3], queued: 1, alreadyQueued: 2 });
    expect(await queuedJobIds(rt)).toEqual(['sale-1-601', 'sale-2-602', 'sale-3-603']);
    expect((await watermarks(rt, [1, 2, 3])).every((mark) => mark !== null)).toBe(true);
  });

  it('stops at the first site when the store refuses the login: the refusal itself is thrown, no other site is tried', async () => {
    const { h, rt } = await setUp({ ...SITES, store: { password: 'wrong-password' } });
    sale(h, 651, 1);
    sale(h, 652, 2);
    const error = await runPull(rt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreLoginRefusedError);
    // Not wrapped as "sales pull of sites 1, 2, 3 failed": sites 2 and 3 would meet the same refusal.
    expect((error as Error).message).not.toMatch(/sales pull of/);
    expect((error as Error).message).toMatch(/wrong username or password/);
    expect(h.sim.counters()).toMatchObject({ failedLogins: 1 });
    expect(await queuedJobIds(rt)).toEqual([]);
  });

  it('reports a failing site as a failed scheduled pull, after queueing the others', async () => {
    const { h } = await setUp({ ...SITES, sales: { pull: { schedule: '* * * * * *' } } });
    sale(h, 701, 1);
    sale(h, 703, 3);
    h.sim.faults.set({ failingSaleSiteIds: [2] });
    const flow = await startSalesFlow(h.deps, { role: 'producer' });
    try {
      const { error } = await flow.events.next('sales:pull:failed');
      expect(error.message).toMatch(/^sales pull of site 2 failed \(sites 1, 3 pulled, 2 queued\)/);
    } finally {
      await flow.close();
    }
    expect(await queuedJobIds(rt!)).toEqual(['sale-1-701', 'sale-3-703']);
  });

  it('queues each sale once under its own site when the store ignores the siteId filter', async () => {
    const { h, rt } = await setUp();
    sale(h, 801, 1);
    sale(h, 802, 2);
    sale(h, 804, 4);
    h.sim.faults.set({ ignoreSaleSiteFilter: true });
    const report = await runPull(rt);
    // Each read gets all three sales: its own is kept, the two others are left to their sites' reads.
    expect(report).toMatchObject({ siteIds: [1, 2, 3], seen: 2, queued: 2, skippedSite: 7 });
    expect(await queuedJobIds(rt)).toEqual(['sale-1-801', 'sale-2-802']);
    // Nor is a sale of another site reserved under the site read.
    expect(await rt.reservations!.store.sale({ siteId: 1, saleId: 802 })).toBeNull();
  });

  it('exports a sale named by id alone under its own SiteId, not store.siteId', async () => {
    const { h } = await setUp();
    sale(h, 901, 2);
    dir = await mkdtemp(join(tmpdir(), 'storesync-sites-'));
    const outcome = await exportOneSale(h.deps, 901, { sink: new FileSalesSink({ dir }) });
    expect(outcome).toMatchObject({ siteId: 2, saleId: 901, exported: true });
    expect(await readdir(dir)).toEqual(['sale-2-901.json']);
    expect(await h.redis.hget(stateKey(h.prefix, 'sales', 2, 901), 'state')).toBe('acked');
  });

  it('keeps the pull of store.siteId alone without inventory.sites', async () => {
    const { h } = await setUp({});
    sale(h, 1001, 1);
    sale(h, 1002, 2);
    expect(await pullSales(h.deps)).toMatchObject({ siteId: 1, siteIds: [1], seen: 1, queued: 1 });
    expect(await queuedJobIds(rt!)).toEqual(['sale-1-1001']);
  });
});
