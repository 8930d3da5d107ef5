/**
 * The sales pull against a store that stays within the spec but behaves unlike the default simulator:
 * `limit` capped at 20 while pageSize is 100, loose types, one malformed sale, a store ignoring `offset`,
 * and a page cap. Sales go into PostgreSQL interface tables.
 */
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import { QUEUE_NAMES, stateKey } from '../../../src/queue/connection.js';
import { VARIANCE_PROFILE } from '../../../src/simulator/index.js';
import { READ_RULES } from '../../../src/store/schemas/fields.js';
import { pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { waitFor } from '../../../src/wait-for.js';
import { type Harness, pgInterfaceTables, startHarness } from './harness.js';

const FIRST = 1000;
const COUNT = 45;
const BROKEN = 1005;

describe('sales pull against a store that varies', () => {
  let h: Harness | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await h?.close();
    h = undefined;
  });

  async function setUp(pull: Record<string, unknown> = { pageSize: 100 }): Promise<Harness> {
    h = await startHarness({ config: { sales: { pull } } });
    const code = [...h.sim.state.items.keys()][0]!;
    for (let n = 0; n < COUNT; n++) {
      h.sim.addSale({ Id: FIRST + n, SiteId: 1, Status: 1, CreationDate: h.storeDate(10 + n), Items: [{ Code: code, Quantity: 1 + (n % 3) }] });
    }
    return h;
  }

  async function storeRejects(harness: Harness) {
    const queue = new Queue(QUEUE_NAMES.storeRejects, { connection: harness.redis, prefix: harness.prefix });
    try {
      return await queue.getFailed();
    } finally {
      await queue.close();
    }
  }

  const rejectedCount = async (harness: Harness): Promise<number> =>
    (await harness.metrics.storeRecordsRejected.get()).values.find((v) => v.labels.resource === 'sale')?.value ?? 0;

  it('pulls and exports every sale through capped pages and loose types; the malformed one is parked once, then flows when fixed', async () => {
    const harness = await setUp();
    harness.sim.faults.set({ ...VARIANCE_PROFILE, malformedSaleIds: [BROKEN] });
    const tables = await pgInterfaceTables();
    cleanups.push(() => tables.close());
    const { admin, schema, sink } = tables;

    harness.sim.resetCounters();
    const first = await pullSales(harness.deps);
    expect(first).toMatchObject({ seen: COUNT - 1, queued: COUNT - 1, rejected: 1, pagingStopped: null });
    // Pages of 20, 20 and 5 (the store's cap, not pageSize), then the empty page that ends the paging.
    expect(harness.sim.counters().requests['GET /Api/Sale']).toBe(4);
    const [parked, ...others] = await storeRejects(harness);
    expect(others).toEqual([]);
    expect(parked!.id).toBe(`sale-${BROKEN}`);
    expect(parked!.data).toMatchObject({ resource: 'sale', id: String(BROKEN), field: 'Total', rule: READ_RULES.number });
    expect(parked!.failedReason).toContain(`sale ${BROKEN}: field Total`);
    expect(await rejectedCount(harness)).toBe(1);
    // A pull that read to the empty page moves the watermark; the rejected sale stays in the lookback window.
    expect(await harness.redis.get(stateKey(harness.prefix, 'sales', 'watermark', 1))).not.toBeNull();

    // Read again by the next pull: still one entry, counted once.
    expect(await pullSales(harness.deps)).toMatchObject({ rejected: 1, queued: 0, alreadyQueued: COUNT - 1 });
    expect((await storeRejects(harness)).map((job) => job.id)).toEqual([`sale-${BROKEN}`]);
    expect(await rejectedCount(harness)).toBe(1);

    const flow = await startSalesFlow(harness.deps, { role: 'worker', sink });
    cleanups.push(() => flow.close());
    const rows = async () => admin.query(`SELECT sale_id, total FROM "${schema}".storesync_sales ORDER BY sale_id`);
    await waitFor(async () => (await rows()).length === COUNT - 1, { message: 'every readable sale in PostgreSQL' });
    // The loose texts ("1234,50") arrived as the numbers the store holds.
    for (const row of await rows()) {
      expect(Number(row.total)).toBeCloseTo(harness.sim.state.salesById.get(Number(row.sale_id))!.sale.Total, 2);
    }
    const lines = await admin.query(`SELECT sale_id, quantity FROM "${schema}".storesync_sale_items WHERE sale_id = ${FIRST + 2}`);
    expect(lines.map((line) => Number(line.quantity))).toEqual([3]);

    // The store now sends the sale well formed: the next pull takes it and its reject is gone.
    harness.sim.faults.set({ malformedSaleIds: [] });
    expect(await pullSales(harness.deps)).toMatchObject({ rejected: 0, queued: 1 });
    expect(await storeRejects(harness)).toEqual([]);
    await waitFor(async () => (await rows()).length === COUNT, { message: `sale ${BROKEN} in PostgreSQL` });
  });

  it('stops paging with a warning and the counter when the store ignores offset, and keeps the watermark', async () => {
    const harness = await setUp({ pageSize: 20 });
    harness.sim.faults.set({ ignoreOffset: true });
    const report = await pullSales(harness.deps);
    expect(report).toMatchObject({ seen: 20, queued: 20, pagingStopped: 'repeated-page' });
    expect((await harness.metrics.storePagingStopped.get()).values).toEqual([{ labels: { resource: 'sale', reason: 'repeated-page' }, value: 1 }]);
    expect(await harness.redis.get(stateKey(harness.prefix, 'sales', 'watermark', 1))).toBeNull();
  });

  it('stops after sales.pull.maxPages pages with the counter and keeps the watermark', async () => {
    const harness = await setUp({ pageSize: 10, maxPages: 2 });
    const report = await pullSales(harness.deps);
    expect(report).toMatchObject({ seen: 20, queued: 20, pagingStopped: 'max-pages' });
    expect((await harness.metrics.storePagingStopped.get()).values).toEqual([{ labels: { resource: 'sale', reason: 'max-pages' }, value: 1 }]);
    expect(await harness.redis.get(stateKey(harness.prefix, 'sales', 'watermark', 1))).toBeNull();
  });
});
