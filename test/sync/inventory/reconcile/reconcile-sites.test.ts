/**
 * The reconcile against the simulator's seeded multi-site catalogue (3 sites), with loose types and one
 * malformed store item, from a PostgreSQL snapshot whose rows name their site for some SKUs only.
 */
import { randomUUID } from 'node:crypto';

import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { QUEUE_NAMES } from '../../../../src/queue/connection.js';
import type { SimItem } from '../../../../src/simulator/index.js';
import { READ_RULES } from '../../../../src/store/schemas/fields.js';
import { runReconcile } from '../../../../src/sync/inventory/reconcile/reconcile.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { createInventoryWorker } from '../../../../src/sync/inventory/worker.js';
import { waitFor } from '../../../../src/wait-for.js';
import { createHarness, type Harness } from '../harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `recs_${randomUUID().replace(/-/g, '')}`;
const db = new pg.Client({ connectionString: PG_URL });

let h: Harness;
let rt: InventoryRuntime;
/** Seeded items by site, variants and parents alike. */
let bySite: Map<number, SimItem[]>;

interface Row {
  code: string;
  stock: number;
  price: number;
  taxes: number;
  dep_stock: string;
  site_id: number | null;
}

function row(item: SimItem, change: Partial<Row> = {}): Row {
  return { code: item.Code, stock: item.Stock, price: item.Price, taxes: item.Taxes, dep_stock: item.DepStock, site_id: null, ...change };
}

function deps(overrides: Record<string, unknown> = {}) {
  return h.deps({
    store: { siteId: 1 },
    inventory: {
      createMissing: true,
      sources: [
        {
          name: 'erp',
          kind: 'sql',
          url: PG_URL,
          schedule: '0 0 0 1 1 *',
          changes: `SELECT code AS "Code", 0 AS cursor FROM ${schema}.items WHERE :cursor IS NOT NULL LIMIT :limit`,
          snapshot: `SELECT code AS "Code", stock AS "Stock", price AS "Price", taxes AS "Taxes", dep_stock AS "DepStock", site_id AS "SiteId" FROM ${schema}.items ORDER BY code`,
          limit: 3,
        },
      ],
      ...overrides,
    },
  });
}

async function storeRejects(): Promise<Array<{ id?: string; data: Record<string, unknown> }>> {
  const queue = new Queue(QUEUE_NAMES.storeRejects, { connection: rt.redis, prefix: h.prefix });
  try {
    return await queue.getFailed();
  } finally {
    await queue.close();
  }
}

const site = (id: number, index: number): SimItem => {
  const item = bySite.get(id)?.[index];
  if (!item) throw new Error(`the seed has no item ${index} on site ${id}`);
  return item;
};

let rows: Row[];

beforeAll(async () => {
  h = await createHarness(120);
  // The worker's runtime has the test's configuration (createMissing).
  rt = openInventoryRuntime(deps());
  bySite = new Map();
  for (const { item } of h.sim.state.items.values()) bySite.set(item.SiteId, [...(bySite.get(item.SiteId) ?? []), { ...item }]);
  expect([...bySite.keys()].sort()).toEqual([1, 2, 3]);
  rows = [
    row(site(1, 0)),
    row(site(1, 1), { stock: site(1, 1).Stock + 5 }),
    // Malformed on the store (below): equal in the ERP.
    row(site(1, 2)),
    // These name their site: site 2 is read because of them.
    row(site(2, 0), { site_id: 2 }),
    row(site(2, 1), { site_id: 2, stock: site(2, 1).Stock + 1 }),
    row(site(2, 2), { site_id: 2, price: site(2, 2).Price + 1 }),
    // These do not: they live on site 3, which nothing configured writes to.
    row(site(3, 0)),
    row(site(3, 1)),
    { code: 'NEW-1', stock: 4, price: 10, taxes: 21, dep_stock: 'DEP-1', site_id: null },
  ];
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`CREATE TABLE ${schema}.items (code text PRIMARY KEY, stock int, price numeric(12,2), taxes numeric(5,2), dep_stock text, site_id int)`);
  for (const r of rows) {
    await db.query(`INSERT INTO ${schema}.items VALUES ($1, $2, $3, $4, $5, $6)`, [r.code, r.stock, r.price, r.taxes, r.dep_stock, r.site_id]);
  }
});

beforeEach(() => {
  h.sim.faults.set({ looseTypes: true, malformedItemCodes: [site(1, 2).Code] });
});

afterAll(async () => {
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
  await rt.close();
  await h.close();
});

describe('reconcile across sites, against a store that varies', () => {
  it('plans a dry run from store.siteId, the sites the records name, and configured siteIds, parking nothing', async () => {
    const report = await runReconcile(deps({ reconcile: { siteIds: [3] } }), { dryRun: true });
    expect(report).toMatchObject({
      sites: [3, 1, 2],
      erpRecords: 9,
      differences: 3,
      perField: { Stock: 2, Price: 1 },
      missingOnStore: 1,
      missingSample: ['NEW-1'],
      onOtherSites: 0,
      storeRejected: 1,
      queued: 4,
    });
    expect(await storeRejects()).toEqual([]);
  });

  it('compares SKUs of every site written to, reports those living elsewhere as "on site N", parks the malformed item, and converges', async () => {
    const d = deps();
    const report = await runReconcile(d);
    expect(report).toMatchObject({
      sites: [1, 2],
      erpRecords: 9,
      // Loose types (numbers as text, Taxes and DepStock as objects) make no false difference.
      differences: 3,
      perField: { Stock: 2, Price: 1 },
      itemsWithDifferences: 3,
      missingOnStore: 1,
      missingSample: ['NEW-1'],
      onOtherSites: 2,
      storeRejected: 1,
      queued: 4,
    });
    expect(report.otherSiteSample).toEqual(
      expect.arrayContaining([
        { sku: site(3, 0).Code, siteIds: [3] },
        { sku: site(3, 1).Code, siteIds: [3] },
      ]),
    );
    expect(report.sample.map(({ sku, field, siteId }) => ({ sku, field, siteId }))).toEqual(
      expect.arrayContaining([
        { sku: site(1, 1).Code, field: 'Stock', siteId: 1 },
        { sku: site(2, 1).Code, field: 'Stock', siteId: 2 },
        { sku: site(2, 2).Code, field: 'Price', siteId: 2 },
      ]),
    );
    const parked = await storeRejects();
    expect(parked).toHaveLength(1);
    expect(parked[0]!.id).toBe(`inventory-${site(1, 2).Code}`);
    expect(parked[0]!.data).toMatchObject({ resource: 'inventory', id: site(1, 2).Code, field: 'Price', value: 'consultar', rule: READ_RULES.number });
    expect((await d.metrics.storeRecordsRejected.get()).values).toEqual([{ labels: { resource: 'inventory' }, value: 1 }]);

    const worker = createInventoryWorker(rt, rt.connect());
    try {
      await waitFor(() => h.sim.writes.length === 4, { message: 'three updates and one creation' });
      expect(h.sim.writes.map((w) => [w.code, w.op]).sort()).toEqual(
        [
          [site(1, 1).Code, 'update'],
          [site(2, 1).Code, 'update'],
          [site(2, 2).Code, 'update'],
          ['NEW-1', 'create'],
        ].sort(),
      );
      // Nothing was created for a SKU that lives on site 3.
      expect(h.sim.state.items.get(site(3, 0).Code)!.item.SiteId).toBe(3);
      await waitFor(async () => (await rt.queue.getJobCounts('active', 'waiting')).active === 0, { message: 'the queue idle' });

      // The store now sends the malformed item well formed: its entry goes, and nothing differs any more.
      h.sim.faults.set({ malformedItemCodes: [] });
      const again = await runReconcile(deps());
      expect(again).toMatchObject({ differences: 0, missingOnStore: 0, onOtherSites: 2, storeRejected: 0, queued: 0 });
      expect(await storeRejects()).toEqual([]);
    } finally {
      await worker.close();
    }
  });
});
