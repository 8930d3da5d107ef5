/**
 * A settings change at restart on a deployment whose `store.siteId` is one of `inventory.sites` (issues
 * 26 and 28 together): that home site's targets continue the bare-Code state, so the pass at start must
 * re-evaluate them from those keys too, not only the targets kept under site keys. Real PostgreSQL, Redis
 * and the simulator with items per site; the expected figures are written out by hand and the writes
 * counted in the simulator's log.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';

import type { InventoryFlow } from '../../../src/sync/inventory/flow.js';
import { startInventoryFlow } from '../../../src/sync/inventory/index.js';
import { waitFor } from '../../../src/wait-for.js';
import { pgScratch } from '../../erp/databases.js';
import { createHarness, drained, type Harness, pgStockSource } from './harness.js';

let scratch: Awaited<ReturnType<typeof pgScratch>>;
let h: Harness;
let flow: InventoryFlow | undefined;

beforeEach(async () => {
  scratch = await pgScratch();
  await scratch.db.query(`CREATE TABLE ${scratch.schema}.stock (code text PRIMARY KEY, qty int NOT NULL, modified timestamp(6) NOT NULL)`);
  h = await createHarness(['HS-1', 'HS-2', 'HS-3'].map((Code) => ({ Code, Stock: 0, Price: 1 })), { itemsPerSite: [1, 2] });
});

afterEach(async () => {
  await flow?.close(1000);
  flow = undefined;
  await h.close();
  await scratch.drop();
});

const stockSource = () => pgStockSource(scratch.schema, { name: 'stock' });

async function start(overrides: Record<string, unknown>): Promise<InventoryFlow> {
  flow = await startInventoryFlow(h.deps(overrides), { role: 'all' });
  await flow.reevaluated;
  return flow;
}

const idle = (): Promise<void> => drained(flow!.queues[0]!);

it('re-evaluates the home site from the bare-Code state when the sites are first listed, and gives the new site every figure', async () => {
  for (const [code, qty] of Object.entries({ 'HS-1': 10, 'HS-2': 4, 'HS-3': 2 })) {
    await scratch.db.query(`INSERT INTO ${scratch.schema}.stock (code, qty, modified) VALUES (:code, :qty, clock_timestamp() AT TIME ZONE 'UTC')`, { code, qty });
  }
  // Before the sites are listed: one store copy, site 1, written under the bare Codes.
  await (await start({ store: { siteId: 1 }, inventory: { sources: [stockSource()] } })).poll('stock');
  await idle();
  await flow!.close(1000);
  flow = undefined;

  const before = h.sim.writes.length;
  const sites = { store: { siteId: 1 }, inventory: { allocation: 'shared', sites: [{ siteId: 1, max: 3 }, { siteId: 2 }], sources: [stockSource()] } };
  const report = await (await start(sites)).reevaluated;
  await idle();
  const writes = h.sim.writes
    .slice(before)
    .map((write) => `${write.code}@${String(write.fields.SiteId)}=${String(write.fields.Stock)}`)
    .sort();
  // Site 1 (home, max 3): min(3, ERP): HS-1 10 → 3 and HS-2 4 → 3 change; HS-3 2 stays 2, acknowledged already.
  // Site 2 (new copy): the ERP figure of every Code.
  expect(writes, 'the home site re-evaluated from its bare-Code state, the new site filled').toEqual(['HS-1@1=3', 'HS-1@2=10', 'HS-2@1=3', 'HS-2@2=4', 'HS-3@2=2']);
  expect(report).toMatchObject({ changed: ['inventory.sites'] });
  await flow!.close(1000);
  flow = undefined;

  // With the sites listed, a later change: shared → split 0.3/0.7, site 1 still capped at 3.
  const next = h.sim.writes.length;
  const split = { store: { siteId: 1 }, inventory: { allocation: 'split', sites: [{ siteId: 1, share: 0.3, max: 3 }, { siteId: 2, share: 0.7 }], sources: [stockSource()] } };
  await start(split);
  await idle();
  const after = h.sim.writes
    .slice(next)
    .map((write) => `${write.code}@${String(write.fields.SiteId)}=${String(write.fields.Stock)}`)
    .sort();
  // Site 1: min(3, floor(ERP × 0.3)): HS-1 3 (unchanged), HS-2 1, HS-3 0. Site 2: floor(ERP × 0.7): 7, 2, 1.
  expect(after, 'the home site is re-evaluated on a later change too').toEqual(['HS-1@2=7', 'HS-2@1=1', 'HS-2@2=2', 'HS-3@1=0', 'HS-3@2=1']);
});

it('queues again a refused write of the release before the sites, naming the bare Code, as the home site\'s, and removes its failed job', async () => {
  for (const [code, qty] of Object.entries({ 'HS-1': 4, 'NEW-1': 3 })) {
    await scratch.db.query(`INSERT INTO ${scratch.schema}.stock (code, qty, modified) VALUES (:code, :qty, clock_timestamp() AT TIME ZONE 'UTC')`, { code, qty });
  }
  // No sites yet: NEW-1, an item the store does not know, is refused (404) and its job, naming the bare Code, fails.
  const first = await start({ store: { siteId: 1 }, inventory: { sources: [stockSource()] } });
  await first.poll('stock');
  await idle();
  await waitFor(async () => (await first.queues[0]!.getFailedCount()) === 1, { message: 'NEW-1 failed (404)', timeoutMs: 10_000 });
  await flow!.close(1000);
  flow = undefined;

  // Site 1 (store.siteId) listed, and the store now takes new items: the refused write is the home site's.
  const second = await start({ store: { siteId: 1 }, inventory: { sites: [{ siteId: 1 }], createMissing: true, sources: [stockSource()] } });
  const report = await second.reevaluated;
  await idle();
  expect(report, 'the bare-Code failed job counted as the home site\'s').toMatchObject({ failedRequeued: 1 });
  expect(await second.queues[0]!.getFailedCount(), 'no failed job left for NEW-1').toBe(0);
  expect(h.sim.state.itemOn('NEW-1', 1)?.item.Stock, 'NEW-1 created on site 1').toBe(3);
});
