/**
 * Kits computed from their components (issue 26), end to end: a PostgreSQL ERP (a stock table, and a
 * composition table read by an `inventory.kits` source), Redis and the simulator over HTTP. Expected
 * figures are written out by hand from `min over components of floor((ERP − safety − reserved) ÷
 * quantity)`, with cases where the near rules (ERP without safety, ceil instead of floor, a decimal
 * quantity rounded) give another number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { describeExplanation } from '../../../../../src/cli/inventory-commands.js';
import type { FlowDeps } from '../../../../../src/sync/flow.js';
import { enqueueSkus } from '../../../../../src/sync/inventory/enqueue.js';
import { explainSku, type InventoryFlow, startInventoryFlow } from '../../../../../src/sync/inventory/index.js';
import { waitsForFirstSalesPull } from '../../../../../src/sync/inventory/listing/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../../src/sync/inventory/runtime.js';
import { waitFor } from '../../../../../src/wait-for.js';
import { PG_URL, pgScratch } from '../../../../erp/databases.js';
import { NEVER } from '../../../../helpers/erp-scenario.js';
import { createHarness, type Harness } from '../../harness.js';

const CODES = ['MUG', 'BOX', 'CAN', 'COFFEE', 'GIFT', 'SIXPACK', 'HAMPER', 'GHOST', 'LOOP-A', 'LOOP-B'];

describe('kits from their components', () => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;
  let h: Harness;
  let deps: FlowDeps;
  let flow: InventoryFlow;
  let rt: InventoryRuntime;
  const done: string[] = [];

  const setStock = async (code: string, qty: number, price = 10): Promise<void> => {
    await scratch.db.query(
      `INSERT INTO ${scratch.schema}.stock (code, qty, price, modified) VALUES (:code, :qty, :price, clock_timestamp() AT TIME ZONE 'UTC')
       ON CONFLICT (code) DO UPDATE SET qty = EXCLUDED.qty, price = EXCLUDED.price, modified = EXCLUDED.modified`,
      { code, qty, price },
    );
  };
  const idle = async (): Promise<void> => {
    const queue = flow.queues[0]!;
    await waitFor(async () => Object.values(await queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue drained', timeoutMs: 30_000 });
  };
  const shown = (code: string): unknown => h.sim.state.itemOn(code)?.item.Stock;

  beforeAll(async () => {
    scratch = await pgScratch();
    await scratch.db.query(`CREATE TABLE ${scratch.schema}.stock (code text PRIMARY KEY, qty int NOT NULL, price numeric NOT NULL, modified timestamp(6) NOT NULL)`);
    await scratch.db.query(`CREATE TABLE ${scratch.schema}.kits (kit text, component text, qty text)`);
    h = await createHarness(CODES.map((Code) => ({ Code, Stock: 0, Price: 1 })));
    deps = h.deps({
      inventory: {
        safetyStock: 1,
        sources: [
          {
            name: 'erp',
            kind: 'sql',
            url: PG_URL,
            timeZone: 'UTC',
            schedule: NEVER,
            changes: `SELECT code AS "Code", qty AS "Stock", price AS "Price", modified AS cursor FROM ${scratch.schema}.stock
              WHERE CAST(:cursor AS timestamp) IS NULL OR modified > :cursor ORDER BY modified, code LIMIT :limit`,
            snapshot: `SELECT code AS "Code", qty AS "Stock", price AS "Price" FROM ${scratch.schema}.stock`,
            diff: { schedule: NEVER },
          },
        ],
        kits: [{ name: 'bundles', kind: 'sql', url: PG_URL, schedule: NEVER, snapshot: `SELECT kit, component, qty AS quantity FROM ${scratch.schema}.kits` }],
      },
    });
    flow = await startInventoryFlow(deps, { role: 'all' });
    rt = openInventoryRuntime(deps);
    flow.events.on('inventory:job:done', ({ sku }) => done.push(sku));
  });

  afterAll(async () => {
    await rt?.close();
    await flow?.close(1000);
    await h?.close();
    await scratch?.drop();
  });

  it('publishes each kit min over its components of floor(sellable ÷ quantity), and never uses a kit\'s own ERP stock', async () => {
    // Safety stock 1: sellable MUG 8, BOX 3, CAN 17, COFFEE 1.
    for (const [code, qty] of [['MUG', 9], ['BOX', 4], ['CAN', 18], ['COFFEE', 2]] as const) await setStock(code, qty);
    // ERPNext and Odoo keep no stock of a kit; a row for one is not used (its price is).
    await setStock('GIFT', 50, 25);
    await scratch.db.query(
      `INSERT INTO ${scratch.schema}.kits VALUES
        ('GIFT', 'MUG', '2'), ('GIFT', 'BOX', '1'),
        ('SIXPACK', 'CAN', '6'),
        ('HAMPER', 'GIFT', '1'), ('HAMPER', 'COFFEE', '0.5'),
        ('GHOST', 'MUG', '1'), ('GHOST', 'NOPE', '1'),
        ('LOOP-A', 'LOOP-B', '1'), ('LOOP-A', 'MUG', '1'), ('LOOP-B', 'LOOP-A', '1')`,
    );
    const report = await flow.kits('bundles');
    expect(report).toMatchObject({ source: 'bundles', read: 10, refused: 0, kits: 6, cycles: [['LOOP-A', 'LOOP-B']] });
    await flow.poll('erp');
    await idle();
    // GIFT: min(floor(8 / 2), floor(3 / 1)) = 3 (ERP without safety: min(4, 4) = 4; its own ERP row: 50).
    expect(shown('GIFT'), 'GIFT = min(floor(8/2), 3)').toBe(3);
    expect(h.sim.state.itemOn('GIFT')?.item.Price, 'a kit\'s price comes from its own ERP row').toBe(25);
    // A pack: floor(17 / 6) = 2 (ceil: 3; the ERP's 18 / 6: 3).
    expect(shown('SIXPACK'), 'SIXPACK = floor(17/6)').toBe(2);
    // Nested: HAMPER = 1 GIFT (2 MUG + 1 BOX) + 0.5 COFFEE: min(4, 3, floor(1 / 0.5) = 2) = 2 (0.5 rounded up to 1: 1).
    expect(shown('HAMPER'), 'HAMPER = min(4, 3, floor(1/0.5))').toBe(2);
    // A component the ERP does not know makes the kit 0.
    expect(shown('GHOST'), 'GHOST has a component unknown to the ERP').toBe(0);
    // The cycle's kits are never written.
    expect(h.sim.writes.filter((write) => write.code.startsWith('LOOP-')), 'kits in a cycle are not written').toEqual([]);
  }, 60_000);

  it('explains a kit: each component, its sellable figure, its quantity, the one that limits it, the kit\'s own ERP stock unused', async () => {
    const explained = await explainSku(deps, 'GIFT');
    expect(explained.kit).toMatchObject({
      source: 'bundles',
      figure: 3,
      limiting: 'BOX',
      cycle: null,
      ignoredErpStock: 50,
      components: [
        { code: 'BOX', quantity: 1, sellable: 3, kits: 3, limiting: true },
        { code: 'MUG', quantity: 2, sellable: 8, kits: 4, limiting: false },
      ],
    });
    expect(explained.published, 'a kit has no published figure of its own').toBeNull();
    const text = describeExplanation(explained);
    expect(text).toContain('BOX: sellable 3, 1 per kit → 3 kits  ← limits the kit');
    expect(text).toContain("The ERP's own Stock for this code (50) is not used");
    const loop = await explainSku(deps, 'LOOP-B');
    expect(loop.kit).toMatchObject({ cycle: ['LOOP-A', 'LOOP-B'], figure: null });
    expect(describeExplanation(loop)).toContain('in the cycle LOOP-A → LOOP-B → LOOP-A');
    expect((await explainSku(deps, 'MUG')).kit, 'a component is not a kit').toBeNull();
  });

  it('explains a kit before the deployment\'s first complete sales pull too, when kits wait for that pull to be written', async () => {
    // The same deployment exporting sales to a sink (reservations on by default): its kits wait for the
    // first complete sales pull, which never ran under this prefix.
    const sink = { kind: 'sql', url: PG_URL, schema: scratch.schema };
    const gated: FlowDeps = { ...deps, config: { ...deps.config, sales: { ...deps.config.sales, enabled: true, sink: sink as never } } };
    expect(waitsForFirstSalesPull(gated.config)).toBe(true);
    // As above: GIFT = min(floor(8 / 2), floor(3 / 1)) = 3, the box limiting.
    expect((await explainSku(gated, 'GIFT')).kit).toMatchObject({ source: 'bundles', figure: 3, limiting: 'BOX' });
  });

  it('re-queues exactly the kits containing a changed component, and rewrites those whose figure moved', async () => {
    done.length = 0;
    const before = h.sim.writes.length;
    const jobsAdded = async (): Promise<number> => Number((await rt.redis.get(rt.queue.keys.id!)) ?? 0);
    const jobsBefore = await jobsAdded();
    // MUG 9 → 5: sellable 4; GIFT min(2, 3) = 2, HAMPER min(2, 3, 2) = 2, GHOST still 0.
    await setStock('MUG', 5);
    await flow.poll('erp');
    await idle();
    // BullMQ's job id counter: MUG's job, then ONE job of its three kits (spread over `concurrency` jobs
    // as a poll's changes are, they would make three jobs of one kit, each costing its BullMQ scripts).
    expect(await jobsAdded() - jobsBefore, 'jobs queued: MUG\'s, and one for the three kits containing it').toBe(2);
    expect(new Set(done), 'the jobs run after MUG changed: MUG and the kits containing it').toEqual(new Set(['MUG', 'GIFT', 'HAMPER', 'GHOST']));
    expect(shown('GIFT')).toBe(2);
    expect(shown('HAMPER')).toBe(2);
    const kitWrites = h.sim.writes.slice(before).filter((write) => write.code !== 'MUG').map((write) => [write.code, write.fields.Stock]);
    expect(kitWrites, 'only the kits whose figure changed are written (HAMPER and GHOST did not)').toEqual([['GIFT', 2]]);
  }, 60_000);

  it('lowers a kit when a component is reserved by a sale of the component alone', async () => {
    // 3 BOX sold alone: sellable BOX 0; GIFT and HAMPER drop to 0.
    const changed = await rt.reservations.reserve([{ siteId: 1, saleId: 77, since: Date.now(), lines: new Map([['BOX', 3]]) }]);
    await enqueueSkus(rt.queue, changed);
    await idle();
    expect(shown('GIFT'), 'GIFT with every BOX reserved').toBe(0);
    expect(shown('HAMPER'), 'HAMPER with every BOX reserved').toBe(0);
  }, 60_000);

  it('makes a kit 0 when its component vanishes from the ERP', async () => {
    // The first diff only learns the snapshot; CAN vanishes from the second.
    await flow.diff('erp');
    await idle();
    expect(shown('SIXPACK'), 'SIXPACK before CAN vanished').toBe(2);
    await scratch.db.query(`DELETE FROM ${scratch.schema}.stock WHERE code = 'CAN'`);
    expect((await flow.diff('erp')).vanished).toBe(1);
    await idle();
    expect(shown('SIXPACK'), 'SIXPACK once CAN vanished').toBe(0);
  }, 60_000);

  it('re-computes a kit whose composition changed, and keeps the last complete composition when the source fails', async () => {
    // SIXPACK becomes a pack of 4 MUG: floor(4 / 4) = 1.
    await scratch.db.query(`UPDATE ${scratch.schema}.kits SET component = 'MUG', qty = '4' WHERE kit = 'SIXPACK'`);
    expect((await flow.kits('bundles')).changed).toBe(1);
    await idle();
    expect(shown('SIXPACK')).toBe(1);
    await scratch.db.query(`ALTER TABLE ${scratch.schema}.kits RENAME TO kits_gone`);
    await expect(flow.kits('bundles')).rejects.toThrow();
    expect(await rt.kits?.explode('SIXPACK'), 'the last complete composition stays').toEqual([{ code: 'MUG', quantity: 4 }]);
    await scratch.db.query(`ALTER TABLE ${scratch.schema}.kits_gone RENAME TO kits`);
  }, 60_000);

  it('refuses bad composition rows with their reason and uses the rest', async () => {
    await scratch.db.query(`INSERT INTO ${scratch.schema}.kits VALUES ('GIFT', 'CUP', '0'), ('GIFT', '', '1'), ('GIFT', 'LID', 'two')`);
    const report = await flow.kits('bundles');
    expect(report.refused, 'three rows refused').toBe(3);
    const refused = await rt.kits!.refused('bundles');
    const rules = [...refused.values()].flat().map((issue) => `${issue.field}: ${issue.rule}`).sort();
    expect(rules).toEqual(['component: a code, not empty', 'quantity: a number above 0', expect.stringMatching(/^quantity: /)]);
    expect((await explainSku(deps, 'GIFT')).kit?.refused.map((issue) => issue.field).sort(), 'explain lists the kit\'s refused rows').toEqual(['component', 'quantity', 'quantity']);
    expect(await rt.kits!.explode('GIFT'), 'GIFT keeps its good rows').toEqual([{ code: 'BOX', quantity: 1 }, { code: 'MUG', quantity: 2 }]);
  }, 60_000);

  it('reconciles a kit with its figure, never with its own ERP stock, and never takes a kit without an ERP row for an orphan', async () => {
    await idle();
    // MUG sellable 4 → 2 gift sets; BOX 4 − 1 − 3 reserved = 0: GIFT 0. The ERP's GIFT row says 50.
    expect(shown('GIFT')).toBe(0);
    h.sim.upsertItem({ Code: 'GIFT', Stock: 7 });
    const report = await flow.reconcile();
    expect(report.sample.filter((d) => d.sku === 'GIFT'), 'the kit compared with its figure').toEqual([expect.objectContaining({ field: 'Stock', erp: 0, store: 7 })]);
    // GIFT's Stock is the only difference (the earlier tests left the rest synced): one item, one SKU.
    expect(report).toMatchObject({ differences: 1, itemsWithDifferences: 1, skusWithDifferences: 1 });
    expect(report.onlyOnStoreSample.filter((code) => ['SIXPACK', 'HAMPER', 'GHOST', 'LOOP-A', 'LOOP-B'].includes(code)), 'kits are no orphans').toEqual([]);
    await idle();
    expect(shown('GIFT'), 'the reconcile queued the kit, its job wrote the figure').toBe(0);
  }, 60_000);
});
