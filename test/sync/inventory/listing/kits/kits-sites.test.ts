/**
 * A kit on two sites (`inventory.sites`, split allocation) uses each site's figures of its components:
 * a sale of the component on site 2 lowers the kit on site 2 only, with and without a home site
 * (`store.siteId` listed: its components' state under the bare-Code keys). Expected figures by hand.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { stateKey } from '../../../../../src/queue/connection.js';
import { enqueueSkus } from '../../../../../src/sync/inventory/enqueue.js';
import { type InventoryFlow, startInventoryFlow } from '../../../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../../src/sync/inventory/runtime.js';
import { waitFor } from '../../../../../src/wait-for.js';
import { PG_URL, pgScratch } from '../../../../erp/databases.js';
import { NEVER } from '../../../../helpers/erp-scenario.js';
import { startMonitor } from '../../../../support/monitor.js';
import { createHarness, type Harness } from '../../harness.js';

// With store.siteId naming site 1, site 1's targets keep the bare-Code state of the release before sites.
describe.each([{ home: 'none', store: {} }, { home: 'site 1 (store.siteId)', store: { siteId: 1 } }])('a kit on two sites, home site $home', ({ store }) => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;
  let h: Harness;
  let flow: InventoryFlow;
  let rt: InventoryRuntime;

  const idle = async (): Promise<void> => {
    const queue = flow.queues[0]!;
    await waitFor(async () => Object.values(await queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue drained', timeoutMs: 30_000 });
  };
  const onSites = (code: string): unknown[] => [1, 2].map((siteId) => h.sim.state.itemOn(code, siteId)?.item.Stock);

  beforeAll(async () => {
    scratch = await pgScratch();
    await scratch.db.query(`CREATE TABLE ${scratch.schema}.stock (code text PRIMARY KEY, qty int NOT NULL)`);
    await scratch.db.query(`CREATE TABLE ${scratch.schema}.kits (kit text, component text, qty numeric)`);
    await scratch.db.query(`INSERT INTO ${scratch.schema}.stock VALUES ('MUG', 20), ('BOX', 30)`);
    await scratch.db.query(`INSERT INTO ${scratch.schema}.kits VALUES ('GIFT', 'MUG', 2), ('GIFT', 'BOX', 1)`);
    h = await createHarness(['MUG', 'BOX', 'GIFT'].map((Code) => ({ Code, Stock: 0, Price: 1 })), { itemsPerSite: [1, 2] });
    const deps = h.deps({
      store,
      inventory: {
        sites: [{ siteId: 1, share: 0.5 }, { siteId: 2, share: 0.5 }],
        allocation: 'split',
        sources: [{ name: 'erp', kind: 'sql', url: PG_URL, snapshot: `SELECT code AS "Code", qty AS "Stock" FROM ${scratch.schema}.stock`, diff: { schedule: NEVER } }],
        kits: [{ name: 'bundles', kind: 'sql', url: PG_URL, schedule: NEVER, snapshot: `SELECT kit, component, qty AS quantity FROM ${scratch.schema}.kits` }],
        reservations: { enabled: true, schedule: NEVER },
      },
    });
    flow = await startInventoryFlow(deps, { role: 'all' });
    rt = openInventoryRuntime(deps);
  });

  afterAll(async () => {
    await rt?.close();
    await flow?.close(1000);
    await h?.close();
    await scratch?.drop();
  });

  it("computes the kit on each site from that site's component figures", async () => {
    await flow.kits('bundles');
    await flow.diff('erp');
    await idle();
    // Split 0.5 / 0.5: MUG 10 and 10, BOX 15 and 15; GIFT min(floor(10 / 2), 15) = 5 on each site.
    expect(onSites('MUG')).toEqual([10, 10]);
    expect(onSites('GIFT')).toEqual([5, 5]);
    // 4 MUG sold on site 2: site 2's MUG 10 − 4 = 6, GIFT floor(6 / 2) = 3 there; site 1 keeps 10 and 5
    // (shared would give both sites (20 − 4) / 2 = 8 mugs and 4 gift sets).
    const changed = await rt.reservations.reserve([{ siteId: 2, saleId: 5, since: Date.now(), lines: new Map([['MUG', 4]]) }]);
    await enqueueSkus(rt.queue, changed.flatMap((code) => [1, 2].map((siteId) => `${code}\u001f${siteId}`)));
    await idle();
    expect(onSites('MUG')).toEqual([10, 6]);
    expect(onSites('GIFT'), 'GIFT per site from the site figures of MUG').toEqual([5, 3]);
  }, 60_000);

  it('reads each component\'s reservations once in a job of the kit on both sites (the hash holds every site\'s), and none of a component without any', async () => {
    // MONITOR on a connection of its own, while one job carries GIFT on both sites; a marker command
    // read back last shows that every command before it has been seen.
    const monitor = await startMonitor();
    const { seen } = monitor;
    const marker = `${rt.config.redis.prefix}:marker:${randomUUID()}`;
    try {
      await enqueueSkus(rt.queue, [1, 2].map((siteId) => `GIFT\u001f${siteId}`), { spread: 1, force: true });
      await idle();
      await rt.redis.get(marker);
      await waitFor(() => seen.some((args) => args[1] === marker), { message: 'MONITOR showed the marker', timeoutMs: 10_000 });
    } finally {
      monitor.close();
    }
    const reads = (code: string): number => seen.filter(([command, key]) => command?.toLowerCase() === 'hgetall' && key === stateKey(rt.config.redis.prefix, 'inv', 'res', code)).length;
    expect(reads('MUG'), 'HGETALLs of MUG\'s reservations for the job of GIFT on sites 1 and 2').toBe(1);
    // BOX has no reservation: the reserved set says so, and its hash is not read at all (issue 27).
    expect(reads('BOX'), 'HGETALLs of BOX\'s reservations for the job of GIFT on sites 1 and 2').toBe(0);
    expect(onSites('GIFT'), 'the figures are those of each site').toEqual([5, 3]);
  }, 60_000);
});
