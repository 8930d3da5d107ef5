/**
 * One ERP stock published to three storefronts (issue 20): `inventory.sites` with the `shared` and the
 * `split` allocation, on real PostgreSQL (the ERP's stock table, one row per Code, no SiteId), Redis and
 * the simulator over HTTP with items per site (each site its own copy of every item, a sale taking from
 * its own site's copy). Rounds of ERP changes, up and down, and bursts of sales on every site, each
 * pulled and reserved. After every round, once settled, each site shows exactly its figure of the
 * allocation, and the sites' figures never add up to more than `ERP − safety − all reservations`; every
 * single write on the way stays within its site's part of the larger of the round's ERP figures. The
 * run prints its seed; SITES_SEED=n repeats one.
 */
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig, packageRoot } from '../../../../src/config/load.js';
import type { SiteOption } from '../../../../src/config/site-options.js';
import { formatStoreDate } from '../../../../src/simulator/clock.js';
import { Random } from '../../../../src/simulator/random.js';
import type { FlowDeps } from '../../../../src/sync/flow.js';
import { explainSku, type InventoryFlow, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import type { Reservation } from '../../../../src/sync/inventory/listing/reservations.js';
import { runPull } from '../../../../src/sync/sales/pull.js';
import { openSalesRuntime, type SalesRuntime } from '../../../../src/sync/sales/runtime.js';
import { pgScratch } from '../../../erp/databases.js';
import { NEVER } from '../../../helpers/erp-scenario.js';
import { createHarness, drained, type Harness, pgStockSource } from '../harness.js';

const CODES = ['AL-1', 'AL-2', 'AL-3', 'AL-4'];
const SITE_IDS = [1, 2, 3];
const SAFETY = 1;
const TIME_ZONE = 'America/Argentina/Buenos_Aires';

/** config/examples/sites.yaml: three sites splitting the stock 0.5 / 0.3 / 0.2, one with its own safety stock, one capped. */
const EXAMPLE = loadConfig({ configFile: join(packageRoot(), 'config', 'examples', 'sites.yaml'), env: {} }).inventory;

const MODES = [
  { allocation: 'shared' as const, sites: [{ siteId: 1 }, { siteId: 2, safetyStock: 2 }, { siteId: 3, max: 12 }] },
  { allocation: EXAMPLE.allocation, sites: EXAMPLE.sites },
];

/**
 * The README's formulas (docs of `inventory.allocation`), written out here as the oracle of every figure:
 * never `allocate()`, the function under test. `shared`: each site shows min(max, sellable − its safety),
 * sellable = max(0, ERP − safety − all reservations). `split`: part_i = min(max_i, floor((ERP − safety) ×
 * share_i)), shown max(0, part_i − siteSafety_i − own reservations_i), less the excess of reservations
 * over their part (and of sites not listed) taken off the sites in their order.
 */
function expectedFigures(erp: number, reserved: readonly Reservation[], sites: readonly SiteOption[], mode: 'shared' | 'split'): { published: number[]; sellable: number } {
  const total = (list: readonly Reservation[]): number => Math.ceil(list.reduce((sum, r) => sum + r.quantity, 0));
  const base = Math.max(0, erp - SAFETY);
  const sellable = Math.max(0, base - total(reserved));
  const capped = (site: SiteOption, value: number): number => Math.min(site.max ?? Number.POSITIVE_INFINITY, value);
  if (mode === 'shared') return { sellable, published: sites.map((site) => capped(site, Math.max(0, sellable - site.safetyStock))) };
  const parts = sites.map((site) => capped(site, Math.floor(base * (site.share ?? 0) + 1e-9)));
  const own = sites.map((site) => total(reserved.filter((r) => r.siteId === site.siteId)));
  let excess = parts.reduce((sum, part, i) => sum + Math.max(0, own[i]! - part), 0) + total(reserved.filter((r) => !sites.some((site) => site.siteId === r.siteId)));
  const published = sites.map((site, i) => Math.max(0, parts[i]! - site.safetyStock - own[i]!));
  for (const [i, figure] of published.entries()) {
    const taken = Math.min(figure, excess);
    published[i] = figure - taken;
    excess -= taken;
  }
  return { published, sellable };
}

describe.each(MODES)('three sites, allocation $allocation', ({ allocation, sites: siteConfig }) => {
  const sites: SiteOption[] = siteConfig.map((site) => ({ safetyStock: 0, ...site }));
  let scratch: Awaited<ReturnType<typeof pgScratch>>;
  let h: Harness;
  let deps: FlowDeps;
  let flow: InventoryFlow;
  let sales: SalesRuntime;

  beforeAll(async () => {
    scratch = await pgScratch();
    await scratch.db.query(`CREATE TABLE ${scratch.schema}.stock (code text PRIMARY KEY, qty int NOT NULL, modified timestamp(6) NOT NULL)`);
    h = await createHarness(CODES.map((Code) => ({ Code, Stock: 0, Price: 10 })), { itemsPerSite: SITE_IDS });
    deps = h.deps({
      store: { timeZone: TIME_ZONE },
      inventory: {
        sites,
        allocation,
        safetyStock: SAFETY,
        sources: [
          pgStockSource(scratch.schema, { snapshot: `SELECT code AS "Code", qty AS "Stock" FROM ${scratch.schema}.stock`, diff: { schedule: NEVER } }),
        ],
        reservations: { enabled: true, schedule: NEVER },
      },
      sales: { pull: { schedule: NEVER, statuses: [1], settleMinutes: 0 }, sink: { kind: 'file', dir: `/tmp/storesync-sites-${h.prefix}` } },
    });
    flow = await startInventoryFlow(deps, { role: 'all' });
    sales = openSalesRuntime(deps);
  });

  afterAll(async () => {
    await sales?.close();
    await flow?.close(1000);
    await h?.close();
    await scratch?.drop();
  });

  const idle = (): Promise<void> => drained(flow.queues[0]!);

  it('publishes each site its figure and never more than the ERP holds less safety and reservations, through sales on every site', async () => {
    const seed = Number(process.env.SITES_SEED ?? Math.floor(Math.random() * 1_000_000));
    console.log(`sites allocation (${allocation}) seed ${seed} (SITES_SEED=${seed} repeats it)`);
    const rng = new Random(seed);
    const erp = new Map<string, number>();
    const reservations: Reservation[] = [];
    let saleId = 1000;
    let writesChecked = 0;
    /** What each site of each Code was last written, replayed write by write. */
    const shown = new Map<string, Map<number, number>>();
    type Reserved = Reservation & { code: string };
    const reservedOf = (list: readonly Reservation[], code: string) => list.filter((r) => (r as Reserved).code === code);

    for (let round = 0; round < 6; round += 1) {
      const before = new Map(erp);
      const reservedBefore = [...reservations];
      // ERP changes, up and down, on some Codes (all of them in the first round).
      for (const code of CODES) {
        if (round > 0 && rng.chance(0.5)) continue;
        const qty = rng.int(0, 40);
        erp.set(code, qty);
        await scratch.db.query(
          `INSERT INTO ${scratch.schema}.stock (code, qty, modified) VALUES (:code, :qty, clock_timestamp() AT TIME ZONE 'UTC')
           ON CONFLICT (code) DO UPDATE SET qty = EXCLUDED.qty, modified = EXCLUDED.modified`,
          { code, qty },
        );
      }
      // A burst of sales on every site (a site may sell more than its part).
      for (let n = rng.int(2, 6); n > 0; n -= 1) {
        const code = rng.pick(CODES);
        const siteId = rng.pick(SITE_IDS);
        const quantity = rng.int(1, 4);
        saleId += 1;
        h.sim.addSale({ Id: saleId, SiteId: siteId, Status: 1, CreationDate: formatStoreDate(Date.now() - 60_000, TIME_ZONE), Items: [{ Code: code, Quantity: quantity }] });
        reservations.push({ siteId, saleId, quantity, since: 0, raw: '', code } as Reserved);
      }
      await flow.poll('erp');
      await runPull(sales);
      await idle();

      // After every write of the round, while ERP changes and sales are in flight: each site's figure is
      // at most its figure for the larger ERP stock of the round and the reservations known before it (a
      // figure only falls with more reservations and rises with more stock), and under split the sites'
      // figures add up to at most that sellable stock.
      for (const write of h.sim.writes.slice(writesChecked)) {
        const siteId = write.fields.SiteId as number;
        expect(SITE_IDS, `write ${JSON.stringify(write)} names a listed site`).toContain(siteId);
        const figures = shown.get(write.code) ?? new Map<number, number>();
        shown.set(write.code, figures);
        figures.set(siteId, write.fields.Stock as number);
        const high = Math.max(before.get(write.code) ?? 0, erp.get(write.code) ?? 0);
        const bound = expectedFigures(high, reservedOf(reservedBefore, write.code), sites, allocation);
        const context = `seed ${seed} round ${round}: after ${JSON.stringify(write)}, sites show ${JSON.stringify([...figures])}, bound ${JSON.stringify(bound)}`;
        for (const [site, figure] of figures) expect(figure, context).toBeLessThanOrEqual(bound.published[SITE_IDS.indexOf(site)]!);
        if (allocation === 'split') expect([...figures.values()].reduce((a, b) => a + b, 0), context).toBeLessThanOrEqual(bound.sellable);
      }
      writesChecked = h.sim.writes.length;

      // Settled: each site shows its figure of the allocation, and their sum stays within the sellable stock.
      for (const code of CODES) {
        const expected = expectedFigures(erp.get(code)!, reservedOf(reservations, code), sites, allocation);
        const onStore = SITE_IDS.map((siteId) => h.sim.state.itemOn(code, siteId)?.item.Stock);
        const context = `seed ${seed} round ${round} ${code}: ERP ${erp.get(code)}, reserved ${JSON.stringify(reservedOf(reservations, code).map((r) => [r.siteId, r.quantity]))}`;
        expect(onStore, context).toEqual(expected.published);
        const total = onStore.reduce((sum: number, v) => sum + (v ?? 0), 0);
        if (allocation === 'split') expect(total, context).toBeLessThanOrEqual(expected.sellable);
      }
    }

    // The run did what it says: writes to every site, and reservations that lowered figures.
    for (const siteId of SITE_IDS) expect(h.sim.writes.some((write) => write.fields.SiteId === siteId)).toBe(true);
    expect(reservations.length).toBeGreaterThan(6);
    const lowered = CODES.some((code) => {
      const without = expectedFigures(erp.get(code)!, [], sites, allocation).published;
      return SITE_IDS.some((siteId, i) => (h.sim.state.itemOn(code, siteId)?.item.Stock ?? 0) < without[i]!);
    });
    expect(lowered, 'some reservation lowered a published figure').toBe(true);

    // explain shows the allocation of every site.
    const explained = await explainSku(deps, 'AL-1', { siteId: 2 });
    expect(explained.target).toBe('AL-1 (site 2)');
    expect(explained.allocation?.mode).toBe(allocation);
    expect(explained.allocation?.lines).toHaveLength(4);
    expect(explained.published?.value).toBe(h.sim.state.itemOn('AL-1', 2)?.item.Stock);
  }, 120_000);

  it('zeroes a Code gone from the snapshot on every site', async () => {
    // Plenty first, so that every site shows some.
    await scratch.db.query(`UPDATE ${scratch.schema}.stock SET qty = 200, modified = clock_timestamp() AT TIME ZONE 'UTC' WHERE code = 'AL-4'`);
    await flow.poll('erp');
    await idle();
    expect((await flow.diff('erp')).vanished).toBe(0);
    await idle();
    // (A site whose own sales exceed its capped part shows 0 already: nothing to write there.)
    const showing = SITE_IDS.filter((siteId) => (h.sim.state.itemOn('AL-4', siteId)?.item.Stock ?? 0) > 0);
    expect(showing.length).toBeGreaterThanOrEqual(2);
    const before = h.sim.writes.length;
    await scratch.db.query(`DELETE FROM ${scratch.schema}.stock WHERE code = 'AL-4'`);
    expect((await flow.diff('erp')).vanished).toBe(1);
    await idle();
    const writes = h.sim.writes.slice(before).filter((write) => write.code === 'AL-4');
    expect(writes.map((write) => write.fields.SiteId).sort()).toEqual(showing);
    for (const siteId of SITE_IDS) expect(h.sim.state.itemOn('AL-4', siteId)?.item.Stock).toBe(0);
  });
});
