/**
 * The reconcile per target (issue 20): the store read per site of `inventory.sites` and per price list the
 * ERP names (`siteId`, `pricelistId`), each item compared with the ERP rows of its target and only the
 * differing targets queued. Stock from ERPNext's `tabBin`, prices from its `tabItem Price` (one row per
 * item and list) on real MariaDB; real Redis; the simulator over HTTP with items per site and price lists.
 */
import { afterEach, describe, expect, it } from 'vitest';

import type { SimulatorOptions } from '../../../../src/simulator/index.js';
import { mariaScratch } from '../../../erp/databases.js';
import { createErpnextShape, ERPNEXT_CHANGES_QUERY, upsertErpnextBin } from '../../../erp/erp-shapes.js';
import { NEVER, type Scenario, startScenario } from '../../../helpers/erp-scenario.js';
import { createHarness, type Harness } from '../harness.js';

const LISTS = [
  { id: 1, code: 'MINORISTA' },
  { id: 2, code: 'MAYORISTA' },
];
const CODES = ['RT-1', 'RT-2', 'RT-3'];
const SITES = [{ siteId: 1 }, { siteId: 2 }, { siteId: 3 }];

const STOCK_SNAPSHOT = "SELECT item_code AS code, actual_qty - reserved_qty AS stock FROM `tabBin` WHERE warehouse = 'Stores - S'";
/** Every row of `tabItem Price`, one per item and list. */
const PRICE_CHANGES = `SELECT item_code AS code, price_list AS PriceListCode, price_list_rate AS price, modified AS \`cursor\`
  FROM \`tabItem Price\` WHERE :cursor IS NULL OR modified >= :cursor ORDER BY modified, name LIMIT :limit`;
const PRICE_SNAPSHOT = 'SELECT item_code AS code, price_list AS PriceListCode, price_list_rate AS price FROM `tabItem Price`';

let scratch: Awaited<ReturnType<typeof mariaScratch>> | undefined;
let h: Harness | undefined;
let scenario: Scenario | undefined;
let clock = Date.UTC(2026, 2, 2, 9);

/** A distinct `modified` per write, naive UTC text as the source reads it (timeZone UTC). */
const stamp = (): string => new Date((clock += 1000)).toISOString().replace('T', ' ').replace('Z', '');

/** A store with `sim`'s readings and `items`, and a flow with the stock and price sources and `inventory` merged in. */
async function start(sim: Pick<SimulatorOptions, 'itemsPerSite' | 'priceLists'>, inventory: Record<string, unknown>, items = CODES.map((Code) => ({ Code, Stock: 0, Price: 1 }))) {
  scratch = await mariaScratch();
  await createErpnextShape(scratch.db);
  h = await createHarness(items, sim);
  const source = (name: string, changes: string, snapshot: string) => ({ name, kind: 'sql', url: scratch!.url, timeZone: 'UTC', schedule: NEVER, changes, snapshot });
  scenario = await startScenario(h, {
    inventory: { priceLists: LISTS, sources: [source('stock', ERPNEXT_CHANGES_QUERY, STOCK_SNAPSHOT), source('prices', PRICE_CHANGES, PRICE_SNAPSHOT)], ...inventory },
  });
  return { h, scenario };
}

afterEach(async () => {
  await scenario?.close();
  await h?.close();
  await scratch?.drop();
  scenario = undefined;
  h = undefined;
  scratch = undefined;
});

async function setStock(code: string, qty: number): Promise<void> {
  await upsertErpnextBin(scratch!.db, code, `${qty}.000000000`, stamp());
}

async function setPrice(code: string, list: string, price: number): Promise<void> {
  await scratch!.db.query(
    'INSERT INTO `tabItem Price` (name, modified, item_code, price_list, price_list_rate) VALUES (:name, :modified, :code, :list, :price) ON DUPLICATE KEY UPDATE price_list_rate = VALUES(price_list_rate), modified = VALUES(modified)',
    { name: `PRICE-${code}-${list}`, modified: stamp(), code, list, price },
  );
}

/** Each site's copy's Stock. */
function stocks(code: string, sites = [1, 2, 3]): Array<number | undefined> {
  return sites.map((site) => h!.sim.state.itemOn(code, site)?.item.Stock);
}

/** The writes the store took after `seq` writes, as the code and the fields sent, in a stable order. */
function writesSince(before: number): Array<Record<string, unknown>> {
  return h!.sim.writes
    .slice(before)
    .map((write) => ({ code: write.code, ...write.fields }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

describe('reconcile per site (items per site on the store, inventory.sites [1, 2, 3])', () => {
  it('repairs a drift of site 2 made with sim.upsertItem on site 2 alone: one forced PUT with SiteId 2, nothing to sites 1 and 3', async () => {
    const { h, scenario } = await start({ itemsPerSite: [1, 2, 3] }, { sites: SITES });
    for (const [i, code] of CODES.entries()) await setStock(code, 10 * (i + 1));
    await scenario.poll('stock');
    expect(stocks('RT-2')).toEqual([20, 20, 20]);

    h.sim.upsertItem({ Code: 'RT-2', SiteId: 2, Stock: 77 });
    expect(stocks('RT-2')).toEqual([20, 77, 20]);
    const before = h.sim.writes.length;
    const report = await scenario.reconcile();
    expect(report).toMatchObject({ sites: [1, 2, 3], priceLists: [], differences: 1, itemsWithDifferences: 1, missingOnStore: 0, onOtherSites: 0, queued: 1 });
    expect(report.sample).toEqual([{ sku: 'RT-2', field: 'Stock', erp: 20, store: 77, siteId: 2, target: 'RT-2 (site 2)' }]);
    expect(writesSince(before)).toEqual([{ code: 'RT-2', SiteId: 2, Stock: 20 }]);
    expect(stocks('RT-2')).toEqual([20, 20, 20]);
    expect(await scenario.reconcile()).toMatchObject({ differences: 0, queued: 0 });
  });

  it('expects each site to show its part under split (shares, a max) and repairs a drifted site with its part', async () => {
    const split = [
      { siteId: 1, share: 0.5 },
      { siteId: 2, share: 0.3 },
      { siteId: 3, share: 0.2, max: 3 },
    ];
    const { h, scenario } = await start({ itemsPerSite: [1, 2, 3] }, { sites: split, allocation: 'split' });
    await setStock('RT-1', 20);
    await setStock('RT-2', 40);
    await setStock('RT-3', 10);
    await scenario.poll('stock');
    expect([stocks('RT-1'), stocks('RT-2'), stocks('RT-3')]).toEqual([
      [10, 6, 3],
      [20, 12, 3],
      [5, 3, 2],
    ]);
    // Every site shows its part: nothing differs (the whole ERP figure would differ on all nine).
    expect(await scenario.reconcile({ dryRun: true })).toMatchObject({ differences: 0, queued: 0 });

    h.sim.upsertItem({ Code: 'RT-2', SiteId: 2, Stock: 99 });
    h.sim.upsertItem({ Code: 'RT-1', SiteId: 3, Stock: 0 });
    const before = h.sim.writes.length;
    const report = await scenario.reconcile();
    expect(report).toMatchObject({ differences: 2, queued: 2 });
    expect(report.sample.map(({ target, erp, store }) => ({ target, erp, store })).sort((a, b) => a.target!.localeCompare(b.target!))).toEqual([
      { target: 'RT-1 (site 3)', erp: 3, store: 0 },
      { target: 'RT-2 (site 2)', erp: 12, store: 99 },
    ]);
    expect(writesSince(before)).toEqual([
      { code: 'RT-1', SiteId: 3, Stock: 3 },
      { code: 'RT-2', SiteId: 2, Stock: 12 },
    ]);
    expect([stocks('RT-1'), stocks('RT-2')]).toEqual([
      [10, 6, 3],
      [20, 12, 3],
    ]);
  });

  it('tells a SKU missing on a site of inventory.sites the store lacks, and zeroes an orphan on every site it is on', async () => {
    // The store holds sites 1 and 2 only; ORPH-1 is on both and in no ERP source.
    const items = [...CODES, 'ORPH-1'].map((Code) => ({ Code, Stock: 5, Price: 1 }));
    const { h, scenario } = await start({ itemsPerSite: [1, 2] }, { sites: SITES, reconcile: { orphans: 'zero' } }, items);
    for (const [i, code] of CODES.entries()) await setStock(code, 10 * (i + 1));

    const planned = await scenario.reconcile({ dryRun: true });
    expect(planned).toMatchObject({
      sites: [1, 2, 3],
      storeItems: 8,
      differences: 6,
      missingOnStore: 3,
      onOtherSites: 0,
      onlyOnStore: 1,
      onlyOnStoreSample: ['ORPH-1'],
      orphans: { checked: true, action: 'zero', toChange: 2, queued: 2, held: 0 },
      queued: 8,
    });
    expect([...planned.missingSample].sort()).toEqual(['RT-1 (site 3)', 'RT-2 (site 3)', 'RT-3 (site 3)']);
    expect(h.sim.writes).toHaveLength(0);

    await scenario.reconcile();
    expect(writesSince(0)).toEqual(
      [
        { code: 'ORPH-1', SiteId: 1, Stock: 0 },
        { code: 'ORPH-1', SiteId: 2, Stock: 0 },
        ...CODES.flatMap((code, i) => [1, 2].map((SiteId) => ({ code, SiteId, Stock: 10 * (i + 1) }))),
      ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    expect(stocks('ORPH-1', [1, 2])).toEqual([0, 0]);
    expect(await scenario.reconcile()).toMatchObject({ differences: 0, missingOnStore: 3, orphans: { toChange: 0 }, queued: 0 });
  });
});

describe('reconcile per price list (price lists on the store, inventory.priceLists [1:MINORISTA, 2:MAYORISTA])', () => {
  it('repairs a drift of the MAYORISTA price with one PUT to that list, and nothing to MINORISTA', async () => {
    const { h, scenario } = await start({ priceLists: LISTS }, {});
    for (const code of CODES) {
      await setStock(code, 4);
      await setPrice(code, 'MINORISTA', 100);
      await setPrice(code, 'MAYORISTA', 80);
    }
    await scenario.poll('stock');
    await scenario.poll('prices');
    const prices = h.sim.state.prices!;
    expect([prices.priceOf(1, 'RT-1')?.Price, prices.priceOf(2, 'RT-1')?.Price]).toEqual([100, 80]);

    h.sim.upsertItem({ Code: 'RT-1', PriceListId: 2, Price: 55 });
    expect([prices.priceOf(1, 'RT-1')?.Price, prices.priceOf(2, 'RT-1')?.Price]).toEqual([100, 55]);
    const before = h.sim.writes.length;
    const report = await scenario.reconcile();
    expect(report).toMatchObject({ priceLists: [1, 2], differences: 1, itemsWithDifferences: 1, queued: 1 });
    expect(report.sample).toEqual([{ sku: 'RT-1', field: 'Price', erp: 80, store: 55, priceListId: 2, target: 'RT-1 (price list MAYORISTA)' }]);
    expect(writesSince(before)).toEqual([{ code: 'RT-1', PriceListId: 2, PriceListCode: 'MAYORISTA', Price: 80 }]);
    expect([prices.priceOf(1, 'RT-1')?.Price, prices.priceOf(2, 'RT-1')?.Price]).toEqual([100, 80]);
    expect(await scenario.reconcile()).toMatchObject({ differences: 0, queued: 0 });
  });
});

describe('reconcile per site and price list', () => {
  it('reports the target label of each difference on a dry run, writing nothing; the run then writes exactly those targets', async () => {
    const { h, scenario } = await start({ itemsPerSite: [1, 2, 3], priceLists: LISTS }, { sites: SITES });
    for (const code of CODES) {
      await setStock(code, 20);
      await setPrice(code, 'MINORISTA', 100);
      await setPrice(code, 'MAYORISTA', 80);
    }
    await scenario.poll('stock');
    await scenario.poll('prices');
    expect(await scenario.reconcile({ dryRun: true })).toMatchObject({ differences: 0, queued: 0 });

    h.sim.upsertItem({ Code: 'RT-2', SiteId: 2, Stock: 77 });
    // A list's prices are the same on every site of this store: the drift shows on each site's target.
    h.sim.upsertItem({ Code: 'RT-1', PriceListCode: 'MAYORISTA', Price: 55 });
    const before = h.sim.writes.length;
    const planned = await scenario.reconcile({ dryRun: true });
    expect(planned).toMatchObject({ dryRun: true, sites: [1, 2, 3], priceLists: [1, 2], differences: 4, itemsWithDifferences: 4, queued: 4 });
    expect(planned.sample.map(({ target, field }) => `${target}: ${field}`).sort()).toEqual([
      'RT-1 (site 1, price list MAYORISTA): Price',
      'RT-1 (site 2, price list MAYORISTA): Price',
      'RT-1 (site 3, price list MAYORISTA): Price',
      'RT-2 (site 2): Stock',
    ]);
    expect(h.sim.writes).toHaveLength(before);
    expect(await scenario.flow.queues[0]!.count()).toBe(0);

    await scenario.reconcile();
    expect(writesSince(before)).toEqual([
      ...[1, 2, 3].map((SiteId) => ({ code: 'RT-1', SiteId, PriceListId: 2, PriceListCode: 'MAYORISTA', Price: 80 })),
      { code: 'RT-2', SiteId: 2, Stock: 20 },
    ]);
    expect(stocks('RT-2')).toEqual([20, 20, 20]);
    expect(h.sim.state.prices!.priceOf(2, 'RT-1')?.Price).toBe(80);
    expect(h.sim.state.prices!.priceOf(1, 'RT-1')?.Price).toBe(100);
  });
});
