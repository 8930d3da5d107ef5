/**
 * Sales on every site at one instant (issue 26, "sites that never erase a sale"): three storefronts of
 * `inventory.sites` on the simulator (items per site, a sale taking from its own site's copy at once),
 * the ERP's stock in PostgreSQL, reservations on. The sales pull reads the sites one after another; a
 * write made after site 1's sales were read but before site 2's would carry a figure that ignores site
 * 2's own sale, overwriting the decrement the store had just made. So the test replays the simulator's
 * write log from the instant of the sales: after EVERY write, each written figure is at most the
 * site's figure with every sale of the instant reserved, under `split` the sites' figures add up to at
 * most the sellable stock, and no write repeats the figure the store last acknowledged for its target.
 * The expected figures are the allocation formula written out here, not the code's `allocate`.
 *
 * Each site's read is made slow on purpose (a page per sale, other sales of the instant in the way), so
 * that a worker re-queued by site 1's read would have written before site 2's read ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatStoreDate } from '../../../../src/simulator/clock.js';
import type { FlowDeps } from '../../../../src/sync/flow.js';
import { type InventoryFlow, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { runPull } from '../../../../src/sync/sales/pull.js';
import { openSalesRuntime, type SalesRuntime } from '../../../../src/sync/sales/runtime.js';
import { pgScratch } from '../../../erp/databases.js';
import { NEVER } from '../../../helpers/erp-scenario.js';
import { createHarness, drained, type Harness, pgStockSource } from '../harness.js';

const SITE_IDS: readonly number[] = [1, 2, 3];
const TIME_ZONE = 'America/Argentina/Buenos_Aires';
/** ERP stock per Code (no safety stock: the case is ERP 20, 3 sold, 17 sellable). */
const ERP: Record<string, number> = { 'IN-1': 20, 'IN-2': 30 };
/** The sales of the instant: Code, site, quantity. IN-1 is the case; IN-2 sells on every site. */
const SALES: ReadonlyArray<[code: string, siteId: number, quantity: number]> = [
  ['IN-1', 1, 2],
  ['IN-1', 2, 1],
  ['IN-2', 1, 1],
  ['IN-2', 2, 2],
  ['IN-2', 3, 3],
];
/** Sales of a Code the ERP does not stock, in every site's read ahead of the sales above (each a page). */
const FILLER_PER_SITE = 6;

/**
 * The figure each site shows, written out from the README's formulas (no site safety, no max):
 * split: `floor(ERP × share) − own sales`, the excess over a part taken off the other sites (none here);
 * shared: `ERP − all sales` on every site.
 */
const MODES = [
  {
    allocation: 'split' as const,
    shares: [0.5, 0.3, 0.2],
    before: { 'IN-1': [10, 6, 4], 'IN-2': [15, 9, 6] },
    after: { 'IN-1': [8, 5, 4], 'IN-2': [14, 7, 3] },
  },
  {
    allocation: 'shared' as const,
    shares: [undefined, undefined, undefined],
    before: { 'IN-1': [20, 20, 20], 'IN-2': [30, 30, 30] },
    after: { 'IN-1': [17, 17, 17], 'IN-2': [24, 24, 24] },
  },
];

describe.each(MODES)('sales on every site at one instant, allocation $allocation', ({ allocation, shares, before, after }) => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;
  let h: Harness;
  let deps: FlowDeps;
  let flow: InventoryFlow;
  let sales: SalesRuntime;

  beforeAll(async () => {
    scratch = await pgScratch();
    await scratch.db.query(`CREATE TABLE ${scratch.schema}.stock (code text PRIMARY KEY, qty int NOT NULL, modified timestamp(6) NOT NULL)`);
    for (const [code, qty] of Object.entries(ERP)) {
      await scratch.db.query(`INSERT INTO ${scratch.schema}.stock VALUES (:code, :qty, clock_timestamp() AT TIME ZONE 'UTC')`, { code, qty });
    }
    h = await createHarness(Object.keys(ERP).map((Code) => ({ Code, Stock: 0, Price: 10 })), { itemsPerSite: [...SITE_IDS] });
    deps = h.deps({
      store: { timeZone: TIME_ZONE },
      inventory: {
        sites: SITE_IDS.map((siteId, i) => ({ siteId, ...(shares[i] === undefined ? {} : { share: shares[i] }) })),
        allocation,
        safetyStock: 0,
        sources: [
          pgStockSource(scratch.schema),
        ],
        reservations: { enabled: true, schedule: NEVER },
      },
      sales: { pull: { schedule: NEVER, statuses: [1], settleMinutes: 0, pageSize: 1 }, sink: { kind: 'file', dir: `/tmp/storesync-instant-${h.prefix}` } },
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

  const onStore = (code: string): Array<number | undefined> => SITE_IDS.map((siteId) => h.sim.state.itemOn(code, siteId)?.item.Stock);

  it('writes no figure that ignores a sale of the instant, keeps the sum within the sellable stock after every write, and repeats no acknowledged figure', async () => {
    await flow.poll('erp');
    await idle();
    for (const code of Object.keys(ERP)) expect(onStore(code), `${code} published before the sales`).toEqual(before[code as keyof typeof before]);
    const from = h.sim.writes.length;

    // The instant: every sale placed at once; the store takes each from its own site's copy.
    const at = formatStoreDate(Date.now() - 60_000, TIME_ZONE);
    let saleId = 5000;
    for (const siteId of SITE_IDS) {
      for (let n = 0; n < FILLER_PER_SITE; n += 1) h.sim.addSale({ Id: (saleId += 1), SiteId: siteId, Status: 1, CreationDate: at, Items: [{ Code: 'IN-FILLER', Quantity: 1 }] });
    }
    for (const [code, siteId, quantity] of SALES) h.sim.addSale({ Id: (saleId += 1), SiteId: siteId, Status: 1, CreationDate: at, Items: [{ Code: code, Quantity: quantity }] });

    await runPull(sales);
    await idle();

    // Replayed write by write from what the store showed right after the instant.
    const shown = new Map(Object.keys(ERP).map((code) => [code, new Map(SITE_IDS.map((siteId, i) => [siteId, before[code as keyof typeof before][i]!]))]));
    const acked = new Map(Object.keys(ERP).map((code) => [code, new Map(shown.get(code)!)]));
    for (const [code, siteId, quantity] of SALES) shown.get(code)!.set(siteId, shown.get(code)!.get(siteId)! - quantity);
    const writes = h.sim.writes.slice(from).filter((write) => write.code in ERP);
    for (const write of writes) {
      const siteId = write.fields.SiteId as number;
      const stock = write.fields.Stock as number;
      const expected = after[write.code as keyof typeof after][SITE_IDS.indexOf(siteId)]!;
      const sellable = ERP[write.code]! - SALES.filter(([code]) => code === write.code).reduce((sum, [, , quantity]) => sum + quantity, 0);
      const figures = shown.get(write.code)!;
      const context = `${allocation}: write ${JSON.stringify(write.fields)} of ${write.code}; sites showed ${JSON.stringify([...figures])}; writes since the instant ${JSON.stringify(writes.map((w) => [w.code, w.fields.SiteId, w.fields.Stock]))}`;
      expect(stock, `${context}: a figure above the site's with every sale of the instant reserved ignores a sale not yet pulled`).toBeLessThanOrEqual(expected);
      expect(stock, `${context}: the store acknowledged this very figure for the target, nothing new was sent`).not.toBe(acked.get(write.code)!.get(siteId));
      figures.set(siteId, stock);
      acked.get(write.code)!.set(siteId, stock);
      if (allocation === 'split') {
        const sum = [...figures.values()].reduce((a, b) => a + b, 0);
        expect(sum, `${context}: the sites add up to more than ${sellable} sellable`).toBeLessThanOrEqual(sellable);
      }
    }

    // Settled: every site shows its figure, and the writes went only where the figure differs from the
    // one the store acknowledged (under split, IN-1's site 3 keeps its 4: no write at all).
    for (const code of Object.keys(ERP)) expect(onStore(code), `${code} settled`).toEqual(after[code as keyof typeof after]);
    const changed = Object.entries(after).flatMap(([code, figures]) =>
      SITE_IDS.filter((_, i) => figures[i] !== before[code as keyof typeof before][i]).map((siteId) => `${code}@${siteId}`),
    );
    expect(new Set(writes.map((write) => `${write.code}@${String(write.fields.SiteId)}`)), `${allocation}: the targets written`).toEqual(new Set(changed));
  });

  it('leaves the Codes of a pull killed between two sites to the next pull, which queues them', async () => {
    // A sale of 1 on site 3; the pull reads site 3 and records its reservation, then dies before its end.
    h.sim.addSale({ Id: 6001, SiteId: 3, Status: 1, CreationDate: formatStoreDate(Date.now() - 60_000, TIME_ZONE), Items: [{ Code: 'IN-1', Quantity: 1 }] });
    await sales.reservations!.record([{ siteId: 3, sale: await deps.store.sales.get(6001), since: Date.now() }]);
    await idle();
    const from = h.sim.writes.length;
    // The next pull finds the sale reserved already; the Code it left waiting is queued all the same.
    await runPull(sales);
    await idle();
    const expected = { split: [8, 5, 3], shared: [16, 16, 16] }[allocation];
    expect(onStore('IN-1'), `${allocation}: IN-1 with the killed pull's sale counted on every site`).toEqual(expected);
    expect(h.sim.writes.slice(from).filter((write) => write.code === 'IN-1').length, 'IN-1 was written by the next pull').toBeGreaterThan(0);
  });
});
