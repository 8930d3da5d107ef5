/**
 * The per-target checks of `npm run chaos -- --targets` (bench/lib/chaos/targets-checks.ts) on a
 * simulator with items per site and price lists: they must tell a stale write to one target from writes
 * to two targets of one Code, and a wrong site figure or list price from the right one, or the chaos
 * run's PASS means nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DiffTruth } from '../../bench/lib/chaos/diff-driver.js';
import { type ErpModel, priceOf } from '../../bench/lib/chaos/erp-driver.js';
import { DEFAULT_LIST, INITIAL_PRICE, listPriceOf, PRICE_LISTS } from '../../bench/lib/chaos/price-driver.js';
import {
  checkNoStaleTargetWrites,
  checkSitesWithinSellable,
  listPriceMismatches,
  type SiteLayout,
  siteValueMismatches,
} from '../../bench/lib/chaos/targets-checks.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startSimulator } from '../../src/simulator/index.js';

const SPLIT: SiteLayout = { allocation: 'split', sites: [{ siteId: 1, share: 0.6, safetyStock: 0 }, { siteId: 2, share: 0.4, safetyStock: 0 }] };
const [MINORISTA, MAYORISTA] = PRICE_LISTS;
const NO_DIFF: DiffTruth = { present: new Map(), absent: [] };

const model = (latest: Record<string, number>): ErpModel => ({
  latest: new Map(Object.entries(latest)),
  invalid: [],
  rowsWritten: 0,
  lateRows: 0,
  repeatedRows: 0,
  retriedInserts: 0,
});

describe('chaos --targets checks', () => {
  let sim: Simulator;

  beforeEach(async () => {
    sim = await startSimulator({
      port: 0,
      items: ['A', 'B'].map((Code) => ({ Code, Stock: 0, Price: INITIAL_PRICE })),
      sales: 0,
      users: 1,
      itemsPerSite: [1, 2],
      priceLists: [DEFAULT_LIST, ...PRICE_LISTS],
    });
  });

  afterEach(async () => {
    await sim.close();
  });

  /** What the simulator's PUT route does with an accepted write: apply it, then log it. */
  function write(code: string, fields: Record<string, unknown>): void {
    sim.state.updateItem(code, fields);
    sim.state.logWrite(code, 'update', fields, Date.now());
  }

  it('takes an older version on another target of the Code for no stale write, and one on the same target for one', () => {
    write('A', { SiteId: 1, Stock: 3, Price: priceOf(5) });
    write('A', { SiteId: 2, Stock: 1, Price: priceOf(4) });
    write('A', { SiteId: 1, PriceListId: MINORISTA.id, PriceListCode: MINORISTA.code, Price: listPriceOf(MINORISTA.id, 3) });
    write('A', { SiteId: 2, PriceListId: MINORISTA.id, PriceListCode: MINORISTA.code, Price: listPriceOf(MINORISTA.id, 2) });
    write('A', { SiteId: 1, PriceListId: MAYORISTA.id, PriceListCode: MAYORISTA.code, Price: listPriceOf(MAYORISTA.id, 1) });
    expect(checkNoStaleTargetWrites(sim, SPLIT)).toMatchObject({ ok: true });

    write('A', { SiteId: 1, PriceListId: MINORISTA.id, PriceListCode: MINORISTA.code, Price: listPriceOf(MINORISTA.id, 2) });
    write('A', { SiteId: 2, Stock: 1, Price: priceOf(3) });
    const check = checkNoStaleTargetWrites(sim, SPLIT);
    expect(check.ok).toBe(false);
    expect(check.detail).toContain('A (site 1, list MINORISTA) Price of version 2 written after version 3');
    expect(check.detail).toContain('A (site 2) Price of version 3 written after version 4');
  });

  it("flags a Stock above its site's part, a list write carrying Stock or naming the default list, and a write to no site", () => {
    // split 0.6/0.4 of version 10: site 1 owns 6, site 2 owns 4.
    write('B', { SiteId: 1, Stock: 6, Price: priceOf(10) });
    write('B', { SiteId: 2, Stock: 4, Price: priceOf(10) });
    expect(checkNoStaleTargetWrites(sim, SPLIT)).toMatchObject({ ok: true });
    write('B', { SiteId: 2, Stock: 5 });
    write('B', { SiteId: 1, PriceListId: MINORISTA.id, PriceListCode: MINORISTA.code, Price: listPriceOf(MINORISTA.id, 1), Stock: 1 });
    write('B', { SiteId: 1, PriceListId: DEFAULT_LIST.id, PriceListCode: DEFAULT_LIST.code, Price: priceOf(11) });
    write('B', { Stock: 1 });
    const { ok, detail } = checkNoStaleTargetWrites(sim, SPLIT);
    expect(ok).toBe(false);
    expect(detail).toContain("B (site 2) Stock 5 above the site's figure 4 of ERP version 10");
    expect(detail).toContain("B Stock 1 written with list MINORISTA's price");
    expect(detail).toContain('B written to list 1/GENERAL, not a list of the ERP');
    expect(detail).toContain('B written to SiteId undefined, not a site of inventory.sites');
  });

  it("wants each site's split figure less its own sales, the default price on every copy, and each list's latest price", () => {
    // ERP 10: parts 6 and 4; a sale of 3 on site 2 leaves site 2 at 1, site 1 at 6.
    sim.addSale({ Status: 1, SiteId: 2, Items: [{ Code: 'A', Quantity: 3 }] });
    write('A', { SiteId: 1, Stock: 6, Price: priceOf(10) });
    write('A', { SiteId: 2, Stock: 1, Price: priceOf(10) });
    write('A', { SiteId: 2, PriceListId: MAYORISTA.id, PriceListCode: MAYORISTA.code, Price: listPriceOf(MAYORISTA.id, 2) });
    const erp = model({ A: 10 });
    expect(siteValueMismatches(sim, SPLIT, erp, NO_DIFF)).toEqual([]);
    expect(checkSitesWithinSellable(sim, SPLIT, erp, NO_DIFF)).toMatchObject({ ok: true });
    const truth = new Map([
      [MINORISTA.code, new Map<string, number>()],
      [MAYORISTA.code, new Map([['A', listPriceOf(MAYORISTA.id, 2)]])],
    ]);
    // The list write left the default price alone; lists without a row keep the initial price.
    expect(sim.state.prices?.priceOf(DEFAULT_LIST.id, 'A')?.Price).toBe(priceOf(10));
    expect(listPriceMismatches(sim, ['A', 'B'], truth)).toEqual([]);

    write('A', { SiteId: 2, Stock: 2 });
    expect(siteValueMismatches(sim, SPLIT, erp, NO_DIFF)).toEqual([expect.stringContaining('A site 2 Stock 2 Price 100.1, expected 1 (ERP 10 Price 100.1, reserved 3@site2)')]);
    write('A', { SiteId: 1, Stock: 7 });
    expect(checkSitesWithinSellable(sim, SPLIT, erp, NO_DIFF)).toMatchObject({ ok: false, detail: expect.stringContaining('A sites show 7 + 2, ERP 10 less 3 reserved is 7') });
    truth.get(MINORISTA.code)?.set('B', listPriceOf(MINORISTA.id, 1));
    expect(listPriceMismatches(sim, ['A', 'B'], truth)).toEqual([`B list MINORISTA Price ${INITIAL_PRICE}, ERP ${listPriceOf(MINORISTA.id, 1)}`]);
  });
});
