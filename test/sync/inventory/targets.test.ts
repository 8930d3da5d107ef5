/**
 * Targets (issue 20): the unit of sync is `(Code, SiteId, price list)`. Two price lists from an
 * ERPNext-shaped `tabItem Price` (one row per item and list) and two sites from records with `SiteId`,
 * on real MariaDB, Redis and the simulator over HTTP in both of its readings (one record per Code, and
 * items per site with price lists of their own); `explain` per target; a list not configured refused.
 */
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { loadConfig, packageRoot } from '../../../src/config/load.js';
import { explainSku } from '../../../src/sync/inventory/explain.js';
import { mariaScratch } from '../../erp/databases.js';
import { createErpnextShape } from '../../erp/erp-shapes.js';
import { NEVER, type Scenario, startScenario } from '../../helpers/erp-scenario.js';
import { createHarness, type Harness } from './harness.js';

/** The store's lists, as config/examples/price-lists.yaml names them (its query maps ERPNext's list names to these codes). */
const LISTS = [
  { id: 1, code: 'RETAIL' },
  { id: 2, code: 'WHOLESALE' },
];
const CODES = ['TG-1', 'TG-2'];

/** ERPNext's `tabItem Price`, one row per item and price list: the `prices` source of config/examples/price-lists.yaml. */
const PRICES = loadConfig({ configFile: join(packageRoot(), 'config', 'examples', 'price-lists.yaml'), env: {} }).inventory.sources.find((source) => source.name === 'prices');
/** Every row of `tabItem Price`, whatever its list. */
const ANY_LIST_SQL = `SELECT item_code AS Code, price_list AS PriceListCode, price_list_rate AS Price, modified AS \`cursor\`
  FROM \`tabItem Price\` WHERE :cursor IS NULL OR modified > :cursor ORDER BY modified, name LIMIT :limit`;
/** Stock per site: one row per item and site. */
const SITES_SQL = `SELECT code AS Code, site_id AS SiteId, qty AS Stock, modified AS \`cursor\`
  FROM site_stock WHERE :cursor IS NULL OR modified > :cursor ORDER BY modified, code, site_id LIMIT :limit`;

const READINGS = [
  { name: 'one record per Code (the default reading)', sim: {} },
  { name: 'items per site and price lists of their own', sim: { itemsPerSite: [1, 2], priceLists: LISTS } },
] as const;

describe.each(READINGS)('targets, simulator with $name', ({ sim: simOptions }) => {
  let scratch: Awaited<ReturnType<typeof mariaScratch>>;
  let h: Harness;
  let scenario: Scenario;
  let clock = Date.UTC(2026, 0, 5, 10);
  /** A distinct `modified` per write (microseconds apart), in UTC. */
  const stamp = (): string => new Date((clock += 1000)).toISOString().replace('T', ' ').replace('Z', '');

  beforeEach(async () => {
    scratch = await mariaScratch();
    await createErpnextShape(scratch.db);
    await scratch.db.query('CREATE TABLE site_stock (code varchar(140) NOT NULL, site_id int NOT NULL, qty int NOT NULL, modified datetime(6) NOT NULL, PRIMARY KEY (code, site_id))');
    h = await createHarness(CODES.map((Code) => ({ Code, Stock: 0, Price: 1 })), simOptions);
    const source = (name: string, changes: string) => ({ name, kind: 'sql', url: scratch.url, timeZone: 'UTC', schedule: NEVER, changes });
    const prices = { ...PRICES, url: scratch.url, timeZone: 'UTC', schedule: NEVER, diff: { schedule: NEVER } };
    scenario = await startScenario(h, { inventory: { priceLists: LISTS, sources: [prices, source('sites', SITES_SQL), source('any-list', ANY_LIST_SQL)] } });
  });

  afterEach(async () => {
    await scenario?.close();
    await h.close();
    await scratch.drop();
  });

  async function setPrice(code: string, list: string, price: number): Promise<void> {
    await scratch.db.query(
      'INSERT INTO `tabItem Price` (name, modified, item_code, price_list, price_list_rate) VALUES (:name, :modified, :code, :list, :price) ON DUPLICATE KEY UPDATE price_list_rate = VALUES(price_list_rate), modified = VALUES(modified)',
      { name: `PRICE-${code}-${list}`, modified: stamp(), code, list, price },
    );
  }

  async function setStock(code: string, siteId: number, qty: number): Promise<void> {
    await scratch.db.query('INSERT INTO site_stock (code, site_id, qty, modified) VALUES (:code, :siteId, :qty, :modified) ON DUPLICATE KEY UPDATE qty = VALUES(qty), modified = VALUES(modified)', {
      code,
      siteId,
      qty,
      modified: stamp(),
    });
  }

  it('a change in one price list sends one PUT to that list, with its prices only, and nothing to the other', async () => {
    for (const code of CODES) {
      await setPrice(code, 'Standard Selling', 100);
      await setPrice(code, 'Wholesale', 80);
    }
    await scenario.poll('prices');
    // One PUT per item and list, each naming its list, carrying nothing but the price.
    expect(h.sim.writes).toHaveLength(4);
    for (const write of h.sim.writes) expect(Object.keys(write.fields).sort()).toEqual(['Price', 'PriceListCode', 'PriceListId']);
    expect(h.sim.writes.find((w) => w.code === 'TG-1' && w.fields.PriceListId === 2)?.fields).toMatchObject({ PriceListCode: 'WHOLESALE', Price: 80 });

    const before = h.sim.writes.length;
    await setPrice('TG-1', 'Wholesale', 75);
    const report = await scenario.poll('prices');
    expect(report.queued).toBe(1);
    const sent = h.sim.writes.slice(before);
    expect(sent.map((w) => ({ code: w.code, ...w.fields }))).toEqual([{ code: 'TG-1', PriceListId: 2, PriceListCode: 'WHOLESALE', Price: 75 }]);
    if (h.sim.state.prices) {
      expect(h.sim.state.prices.priceOf(2, 'TG-1')?.Price).toBe(75);
      expect(h.sim.state.prices.priceOf(1, 'TG-1')?.Price).toBe(100);
    }

    // explain per target: the list by code or id; a list not configured is refused by name.
    const deps = h.deps({ inventory: { priceLists: LISTS } });
    const wholesale = await explainSku(deps, 'TG-1', { priceList: 'WHOLESALE' });
    expect(wholesale).toMatchObject({ target: 'TG-1 (price list WHOLESALE)', priceListId: 2, store: { acknowledged: { Price: 75 } } });
    expect(wholesale.erp.map((f) => [f.field, f.value])).toEqual([['Price', 75]]);
    expect((await explainSku(deps, 'TG-1', { priceList: '1' })).store.acknowledged).toMatchObject({ Price: 100 });
    await expect(explainSku(deps, 'TG-1', { priceList: 'Outlet' })).rejects.toThrow(/--price-list.*Outlet.*inventory\.priceLists \(1:RETAIL, 2:WHOLESALE\)/);
  });

  it('diffs a snapshot of two price lists per target; a list row gone takes no stock; the reconcile leaves list prices alone', async () => {
    for (const code of CODES) {
      await setPrice(code, 'Standard Selling', 100);
      await setPrice(code, 'Wholesale', 80);
    }
    expect((await scenario.diff('prices')).queued).toBe(4);
    expect(h.sim.writes).toHaveLength(4);
    await setPrice('TG-2', 'Wholesale', 70);
    expect(await scenario.diff('prices')).toMatchObject({ changed: 1, queued: 1 });
    expect(h.sim.writes.slice(4).map((w) => ({ code: w.code, ...w.fields }))).toEqual([{ code: 'TG-2', PriceListId: 2, PriceListCode: 'WHOLESALE', Price: 70 }]);
    // The Wholesale row of TG-1 deleted: that target vanished, and nothing is written (prices cannot be unset).
    await scratch.db.query('DELETE FROM `tabItem Price` WHERE name = :name', { name: 'PRICE-TG-1-Wholesale' });
    expect(await scenario.diff('prices')).toMatchObject({ vanished: 1, queued: 0 });
    expect(h.sim.writes).toHaveLength(5);
    const report = await scenario.reconcile({ source: 'prices' });
    expect(report.perField).toEqual({});
    expect(h.sim.writes).toHaveLength(5);
  });

  it('gives each site its own stock from records with SiteId, one PUT per site', async () => {
    await setStock('TG-1', 1, 7);
    await setStock('TG-1', 2, 3);
    await scenario.poll('sites');
    const sent = h.sim.writes.map((w) => ({ code: w.code, ...w.fields }));
    expect(sent).toHaveLength(2);
    expect(sent).toEqual(expect.arrayContaining([{ code: 'TG-1', SiteId: 1, Stock: 7 }, { code: 'TG-1', SiteId: 2, Stock: 3 }]));
    if (h.sim.state.siteItems) {
      expect(h.sim.state.itemOn('TG-1', 1)?.item.Stock).toBe(7);
      expect(h.sim.state.itemOn('TG-1', 2)?.item.Stock).toBe(3);
    }

    // A change on site 2 is written to site 2 only.
    await setStock('TG-1', 2, 1);
    await scenario.poll('sites');
    expect(h.sim.writes.slice(2).map((w) => ({ code: w.code, ...w.fields }))).toEqual([{ code: 'TG-1', SiteId: 2, Stock: 1 }]);
    if (h.sim.state.siteItems) expect(h.sim.state.itemOn('TG-1', 1)?.item.Stock).toBe(7);

    const deps = h.deps({ inventory: { priceLists: LISTS } });
    expect(await explainSku(deps, 'TG-1', { siteId: 2 })).toMatchObject({ target: 'TG-1 (site 2)', siteId: 2, published: { value: 1 }, store: { acknowledged: { Stock: 1 } } });
    expect(await explainSku(deps, 'TG-1', { siteId: 1 })).toMatchObject({ target: 'TG-1 (site 1)', published: { value: 7 } });

    // A refused row is the target's: explained with its site, not with the other.
    await setStock('TG-1', 2, -4);
    expect((await scenario.poll('sites')).rejected).toBe(1);
    expect((await explainSku(deps, 'TG-1', { siteId: 2 })).rejects).toEqual([expect.objectContaining({ reason: expect.stringMatching(/Stock/) })]);
    expect((await explainSku(deps, 'TG-1', { siteId: 1 })).rejects).toEqual([]);
  });

  it('refuses a record naming a price list not configured, naming the record, field, value and rule', async () => {
    const refused: string[] = [];
    scenario.flow.events.on('inventory:record:refused', ({ reason }) => refused.push(reason));
    await setPrice('TG-2', 'Outlet', 50);
    const report = await scenario.poll('any-list');
    expect(report.rejected).toBe(1);
    expect(h.sim.writes).toHaveLength(0);
    expect(refused).toEqual([expect.stringMatching(/TG-2.*PriceListCode.*Outlet.*a price list of inventory\.priceLists \(1:RETAIL, 2:WHOLESALE\)/)]);
  });
});
