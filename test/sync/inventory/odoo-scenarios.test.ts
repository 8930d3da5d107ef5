/**
 * End-to-end scenarios on an Odoo-shaped PostgreSQL database (test/erp/odoo-erp.ts), written the way
 * Odoo writes: each ends with the store equal to the ERP's truth (computed from the raw rows), or held
 * by the guard where that is the point. Real Redis, real PostgreSQL, the simulator over HTTP.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { PG_URL, pgScratch } from '../../erp/databases.js';
import { exampleSqlSource, pgUrlIn } from '../../erp/example-sources.js';
import { ODOO_CUSTOMERS, ODOO_SHELF, ODOO_STOCK, OdooErp, type OdooProduct } from '../../erp/odoo-erp.js';
import { NEVER, type Scenario, startScenario, storeMismatches } from '../../helpers/erp-scenario.js';
import { createHarness, type Harness } from './harness.js';

const CODES = Array.from({ length: 12 }, (_, i) => `OD-${String(i + 1).padStart(3, '0')}`);
const PRODUCTS: OdooProduct[] = CODES.map((sku, i) => ({
  sku,
  price: 10 + i,
  // Several quants per product (lots), one in a customer location that is not sellable stock.
  quants: [
    { location: ODOO_STOCK, quantity: 10 + i, reserved: i % 3 },
    // Sold by the kg: the fraction is floored (stockRounding's default).
    { location: ODOO_SHELF, quantity: '2.5' },
    { location: ODOO_CUSTOMERS, quantity: 50 },
  ],
}));

let scratch: Awaited<ReturnType<typeof pgScratch>>;
let odoo: OdooErp;
let h: Harness;
let scenario: Scenario;

/** The source of config/examples/odoo.yaml on the scratch schema, polled and diffed by hand. */
const ODOO = exampleSqlSource('odoo.yaml');
function odooSource(overrides: Record<string, unknown> = {}) {
  return { ...ODOO, url: pgUrlIn(odoo.schema), schedule: NEVER, diff: { schedule: NEVER }, ...overrides };
}

async function start(source = odooSource()): Promise<void> {
  scenario = await startScenario(h, { inventory: { sources: [source], reconcile: { orphans: 'zero' } } });
}

async function mismatches(): Promise<string[]> {
  return storeMismatches(h.sim, await odoo.truth(), CODES);
}

beforeEach(async () => {
  scratch = await pgScratch();
  odoo = await OdooErp.create(scratch.db, scratch.schema, PG_URL);
  // The catalogue was loaded an hour ago.
  await odoo.createProducts(PRODUCTS, { writeDate: OdooErp.naiveUtc(Date.now() - 3_600_000) });
  h = await createHarness(CODES.map((Code) => ({ Code, Stock: 0, Price: 1 })));
});

afterEach(async () => {
  await scenario?.close();
  await h.close();
  await odoo.close();
  await scratch.drop();
});

describe('Odoo (PostgreSQL) end to end', () => {
  it('publishes quantity − reserved over internal locations, floored, and the list price on the first poll', async () => {
    await start();
    expect(await scenario.poll('odoo')).toMatchObject({ read: CODES.length, rejected: 0 });
    expect(await mismatches()).toEqual([]);
    expect(h.sim.state.items.get('OD-002')?.item).toMatchObject({ Stock: 11 - 1 + 2, Price: 11 });
  });

  it('catches a write committed late, stamped with its transaction start, through the overlap', async () => {
    await start();
    await scenario.poll('odoo');
    expect(h.sim.state.items.get('OD-002')?.item.Stock).toBe(11 - 1 + 2);
    // A long request begins (write_date = its start), another commits a later change first.
    const session = await odoo.session(PG_URL);
    try {
      await session.query('BEGIN');
      await odoo.ormSetQuantity('OD-001', ODOO_STOCK, 3, { client: session });
      await odoo.ormSetQuantity('OD-002', ODOO_STOCK, 4);
      await scenario.poll('odoo');
      expect(h.sim.state.items.get('OD-002')?.item.Stock).toBe(4 - 1 + 2);
      await session.query('COMMIT');
    } finally {
      await session.end();
    }
    // The cursor passed OD-001's write_date; the overlap (inventory sources' overlapMs) reads it again.
    await scenario.poll('odoo');
    expect(await mismatches()).toEqual([]);
  });

  it('fixes by the reconcile a transaction older than the overlap, a raw-SQL quantity and a quant deleted by a script', async () => {
    await start();
    await scenario.poll('odoo');
    await odoo.ormSetQuantity('OD-003', ODOO_STOCK, 40);
    await scenario.poll('odoo');
    // Committed now, stamped 10 minutes ago: behind the cursor by more than the overlap (60 s).
    await odoo.ormSetQuantity('OD-004', ODOO_STOCK, 1, { writeDate: OdooErp.naiveUtc(Date.now() - 10 * 60_000) });
    await odoo.rawSetQuantity('OD-005', ODOO_STOCK, 77);
    await odoo.rawDeleteQuants('OD-006', ODOO_SHELF);
    const poll = await scenario.poll('odoo');
    expect(poll.queued).toBe(0);
    expect(await mismatches()).toHaveLength(3);

    const report = await scenario.reconcile();
    expect(report).toMatchObject({ differences: 3, missingOnStore: 0, onlyOnStore: 0 });
    expect(await mismatches()).toEqual([]);
  });

  it('keeps the totals through merged quants and unlinked zero quants, whose cursor goes back', async () => {
    await start();
    // An emptied quant of OD-008 (its newest write), then a second lot of OD-007 in WH/Stock.
    await odoo.ormSetQuantity('OD-008', ODOO_SHELF, 0);
    await scenario.poll('odoo');
    await scratch.db.query(
      `INSERT INTO ${odoo.schema}.stock_quant (product_id, location_id, quantity, write_date)
       SELECT id, ${ODOO_STOCK}, 5, now() AT TIME ZONE 'UTC' FROM ${odoo.schema}.product_product WHERE default_code = 'OD-007'`,
    );
    await scenario.poll('odoo');
    await odoo.mergeQuants();
    await odoo.unlinkZeroQuants();
    await scenario.poll('odoo');
    expect(await mismatches()).toEqual([]);
    const report = await scenario.reconcile();
    expect(report).toMatchObject({ differences: 0, queued: 0 });
  });

  it('zeroes an archived product (gone from both queries) by the reconcile', async () => {
    await start();
    await scenario.poll('odoo');
    await odoo.archive('OD-009');
    await scenario.poll('odoo');
    expect(h.sim.state.items.get('OD-009')?.item.Stock).toBeGreaterThan(0);
    const report = await scenario.reconcile();
    expect(report).toMatchObject({ onlyOnStore: 1, onlyOnStoreSample: ['OD-009'], orphans: { queued: 1, held: 0 } });
    expect(await mismatches()).toEqual([]);
  });

  it('catches by the snapshot diff alone an old transaction, a raw-SQL quantity, a deleted quant and an archived product', async () => {
    await start();
    await scenario.poll('odoo');
    expect(await scenario.diff('odoo')).toMatchObject({ previous: 0, changed: CODES.length, vanished: 0 });
    await odoo.ormSetQuantity('OD-003', ODOO_STOCK, 40);
    await scenario.poll('odoo');
    await odoo.ormSetQuantity('OD-004', ODOO_STOCK, 1, { writeDate: OdooErp.naiveUtc(Date.now() - 10 * 60_000) });
    await odoo.rawSetQuantity('OD-005', ODOO_STOCK, 77);
    await odoo.rawDeleteQuants('OD-006', ODOO_SHELF);
    await odoo.archive('OD-009');
    expect((await scenario.poll('odoo')).queued).toBe(0);
    expect(await mismatches()).toHaveLength(4);

    // OD-003 changed since the previous snapshot too (the poll already sent it: change detection skips it).
    expect(await scenario.diff('odoo')).toMatchObject({ changed: 4, vanished: 1, held: 0 });
    expect(await mismatches()).toEqual([]);
  });

  it('holds everything when the snapshot query is broken and returns nothing, the store left as it was', async () => {
    await start();
    await scenario.poll('odoo');
    await scenario.diff('odoo');
    await scenario.close();
    // A filter gone wrong (say, on a company that does not exist): the query runs and returns no row.
    await start(odooSource({ snapshot: ODOO.snapshot!.replace('WHERE p.active', 'WHERE p.id < 0 AND p.active') }));
    expect(await scenario.diff('odoo')).toMatchObject({ read: 0, vanished: 0, held: CODES.length });
    expect(await mismatches()).toEqual([]);
    const report = await scenario.reconcile();
    expect(report).toMatchObject({ erpRecords: 0, onlyOnStore: CODES.length, orphans: { held: CODES.length, queued: 0 }, queued: 0 });
    expect(await mismatches()).toEqual([]);
  });

  it('publishes a bulk load of products created in one transaction (one write_date), paged by :afterKey', async () => {
    const bulk: OdooProduct[] = Array.from({ length: 250 }, (_, i) => ({ sku: `BULK-${String(i).padStart(4, '0')}`, price: 5, quants: [{ location: ODOO_STOCK, quantity: i }] }));
    await odoo.createProducts(bulk);
    h.sim.setItems([...CODES, ...bulk.map((p) => p.sku)].map((Code) => ({ Code, Stock: 0, Price: 1 })));
    await start(odooSource({ limit: 40 }));
    await scenario.poll('odoo');
    expect(storeMismatches(h.sim, await odoo.truth(), [...CODES, ...bulk.map((p) => p.sku)])).toEqual([]);
  });
});
