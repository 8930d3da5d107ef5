import { randomUUID } from 'node:crypto';

import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { runReconcile } from '../../../../src/sync/inventory/reconcile/reconcile.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { jobSkus } from '../../../../src/sync/inventory/types.js';
import { createInventoryWorker } from '../../../../src/sync/inventory/worker.js';
import { waitFor } from '../../../../src/wait-for.js';
import { createHarness, type Harness, stage, writesOf } from '../harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `rec_${randomUUID().replace(/-/g, '')}`;
const db = new pg.Client({ connectionString: PG_URL });

const STORE = [
  { Code: 'R-1', Stock: 10, Price: 100 },
  { Code: 'R-2', Stock: 20, Price: 200 },
  { Code: 'R-3', Stock: 30, Price: 300 },
  { Code: 'R-4', Stock: 40, Price: 400 },
  { Code: 'R-5', Stock: 50, Price: 500 },
];
const ERP = [
  ['R-1', 10, '100.00'],
  ['R-2', 21, '200.00'],
  ['R-3', 30, '300.00'],
  ['R-4', 40, '401.00'],
  ['R-6', 60, '600.00'],
  ['R-7', -1, '700.00'],
] as const;

let h: Harness;
let rt: InventoryRuntime;

/** The test's flow dependencies, with `inventory` options over the test's source. */
function deps(inventory: Record<string, unknown> = {}) {
  return h.deps({
    inventory: {
      ...inventory,
      sources: [
        {
          name: 'erp',
          kind: 'sql',
          url: PG_URL,
          schedule: '0 0 0 1 1 *',
          changes: `SELECT code AS "Code", stock AS "Stock", price AS "Price", 0 AS cursor FROM ${schema}.items WHERE :cursor IS NOT NULL LIMIT :limit`,
          snapshot: `SELECT code AS "Code", stock AS "Stock", price AS "Price" FROM ${schema}.items`,
          limit: 2,
        },
      ],
    },
  });
}

beforeAll(async () => {
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`CREATE TABLE ${schema}.items (code text PRIMARY KEY, stock int, price numeric(12,3))`);
  for (const row of ERP) await db.query(`INSERT INTO ${schema}.items VALUES ($1, $2, $3)`, [...row]);
});

afterAll(async () => {
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
});

// The ERP table is only read; the store and the Redis state are written, so each test gets its own simulator and
// prefix and depends on no other.
beforeEach(async () => {
  h = await createHarness(STORE);
  rt = openInventoryRuntime(h.deps());
});

afterEach(async () => {
  await rt.close();
  await h.close();
});

describe('runReconcile', () => {
  it('plans only the real differences on a dry run and writes nothing', async () => {
    const progress: Array<[number, number]> = [];
    const d = deps();
    const report = await runReconcile(d, { dryRun: true, onProgress: (done, total) => progress.push([done, total]) });
    expect(report).toMatchObject({
      dryRun: true,
      sources: ['erp'],
      erpRecords: 6,
      storeItems: 5,
      differences: 2,
      perField: { Stock: 1, Price: 1 },
      itemsWithDifferences: 2,
      missingOnStore: 1,
      missingSample: ['R-6'],
      rejected: 1,
      queued: 2,
    });
    expect(report.sample).toEqual([
      { sku: 'R-2', field: 'Stock', erp: 21, store: 20 },
      { sku: 'R-4', field: 'Price', erp: 401, store: 400 },
    ]);
    expect(progress.at(-1)).toEqual([6, 6]);
    expect(await rt.queue.count()).toBe(0);
    expect((await rt.state.read('R-2')).pending.size).toBe(0);
    expect((await d.metrics.reconcileDrift.get()).values).toContainEqual(expect.objectContaining({ labels: { field: 'Stock' }, value: 1 }));
  });

  it('queues only the differing fields, which the worker then PUTs even where the store was acknowledged before', async () => {
    // R-1 was sent and acknowledged at 10, then someone changed it on the store: change detection alone would skip it.
    const worker = createInventoryWorker(rt, rt.connect());
    try {
      const first = rt.events.next('inventory:job:done', (e) => e.sku === 'R-1');
      await stage(rt, 'R-1', { Stock: 10 }, 1);
      await first;
      h.sim.upsertItem({ Code: 'R-1', Stock: 3 });
      const before = h.sim.writes.length;

      const report = await runReconcile(deps());
      expect(report).toMatchObject({ differences: 3, queued: 3, perField: { Stock: 2, Price: 1 } });
      await waitFor(() => h.sim.writes.length - before === 3, { message: 'three writes' });
      expect(writesOf(h.sim, 'R-1').at(-1)?.fields).toEqual({ Stock: 10 });
      expect(writesOf(h.sim, 'R-2').map((w) => w.fields)).toEqual([{ Stock: 21 }]);
      expect(writesOf(h.sim, 'R-4').map((w) => w.fields)).toEqual([{ Price: 401 }]);
      expect(h.sim.writes.slice(before).map((w) => w.code).sort()).toEqual(['R-1', 'R-2', 'R-4']);
      await waitFor(async () => (await rt.queue.getJobCounts('active', 'waiting')).active === 0);

      const again = await runReconcile(deps());
      expect(again).toMatchObject({ differences: 0, queued: 0 });
    } finally {
      await worker.close();
    }
  });

  it('queues a Stock the store shows too high at the priority of a decrease, ahead of increases and prices', async () => {
    // store 35, ERP 30 (the store must go down); R-2: store 20, ERP 21 (up); R-4: a price only.
    h.sim.upsertItem({ Code: 'R-3', Stock: 35 });
    const report = await runReconcile(deps());
    expect(report).toMatchObject({ differences: 3, queued: 3, perField: { Stock: 2, Price: 1 } });
    const jobs = await rt.queue.getJobs(['waiting', 'prioritized', 'delayed']);
    const priorityOf = (sku: string) => jobs.filter((job) => jobSkus(job.data).includes(sku)).map((job) => job.opts.priority);
    // The rule (enqueue.ts): decreases 1, increases 2, other fields 3.
    expect(priorityOf('R-3')).toEqual([1]);
    expect(priorityOf('R-2')).toEqual([2]);
    expect(priorityOf('R-4')).toEqual([3]);
  });

  it('queues the creation of a missing SKU at the priority of other changes, and the orphan action at that of a decrease', async () => {
    // R-6 is in the ERP only: created (createMissing); R-5 is on the store only: an orphan, zeroed (1 of 5 store
    // items is past the guard's 5 %: confirmed). R-2 (Stock up) and R-4 (a price) as in the test above.
    const report = await runReconcile(deps({ createMissing: true, reconcile: { orphans: 'zero' } }), { confirmOrphans: true });
    expect(report).toMatchObject({ missingOnStore: 1, missingSample: ['R-6'], onlyOnStore: 1, orphans: { checked: true, toChange: 1, queued: 1, held: 0 } });
    const jobs = await rt.queue.getJobs(['waiting', 'prioritized', 'delayed']);
    const priorityOf = (sku: string) => jobs.filter((job) => jobSkus(job.data).includes(sku)).map((job) => job.opts.priority);
    // The rule (enqueue.ts): decreases 1, increases 2, other fields 3; a creation is no decrease, a zeroed orphan is.
    expect(priorityOf('R-6')).toEqual([3]);
    expect(priorityOf('R-5')).toEqual([1]);
    expect(priorityOf('R-2')).toEqual([2]);
    expect(priorityOf('R-4')).toEqual([3]);
  });

  it('counts an item read without a site filter that names no site as on the store, not missing', async () => {
    // The store names no SiteId for R-1 and R-2 (null, read as none); no site is configured, so the read has no filter.
    for (const code of ['R-1', 'R-2']) (h.sim.state.items.get(code)!.item as { SiteId: unknown }).SiteId = null;
    const report = await runReconcile(deps(), { dryRun: true });
    // Only R-6 is in the ERP and nowhere on the store (R-7 is refused: a negative stock).
    expect(report).toMatchObject({ storeItems: 5, differences: 2, missingOnStore: 1, missingSample: ['R-6'] });
  });

  it('compares only the SKUs asked for, reading them from the store one by one', async () => {
    h.sim.upsertItem({ Code: 'R-3', Stock: 1 });
    const report = await runReconcile(deps(), { skus: ['R-3'], dryRun: true });
    expect(report).toMatchObject({ erpRecords: 1, storeItems: 1, differences: 1, sample: [{ sku: 'R-3', field: 'Stock', erp: 30, store: 1 }] });
  });

  it('runs on the reconcile schedule of a producer flow', async () => {
    const d = deps();
    const flow = await startInventoryFlow({ ...d, config: { ...d.config, inventory: { ...d.config.inventory, reconcile: { ...d.config.inventory.reconcile, schedule: '*/1 * * * * *' } } } }, { role: 'producer' });
    try {
      const report = await flow.events.next('inventory:reconcile:done');
      expect(report).toMatchObject({ sources: ['erp'], erpRecords: 6 });
    } finally {
      await flow.close();
    }
  });

  it('refuses an unknown source name', async () => {
    await expect(runReconcile(deps(), { source: 'nope' })).rejects.toThrow('no source named "nope"');
  });
});
