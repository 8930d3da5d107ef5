/**
 * Listing `inventory.sites` on a deployment whose `store.siteId` names one of them (issue 26): that site
 * is the store copy the release before sites wrote under the bare Code, so its targets continue that
 * state. The fixture is the Redis state of a release before sites (bare-Code keys, JSON entries, a
 * killed release's job still queued with a bare `skus` entry), written with literal keys as
 * upgrade-targets.test.ts does; the ERP then delivers every Code again to both sites, as a poll of
 * records without SiteId does. Expected: on the home site only the pending change is sent, the codes
 * already right are not written again, and no older value goes over a newer one; the other site is a
 * new copy and gets everything.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { createRedis } from '../../../src/queue/connection.js';
import { explainSku } from '../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import { keyOf } from '../../../src/sync/inventory/target-key.js';
import { type Scenario, startScenario } from '../../helpers/erp-scenario.js';
import { createHarness, type Harness, REDIS_URL, stage } from './harness.js';

let h: Harness;
let redis: Redis;
let rt: InventoryRuntime;
let scenario: Scenario | undefined;

/** store.siteId 1 listed among the sites: site 1 is the home site, site 2 a new copy. */
const CONFIG = { store: { siteId: 1 }, inventory: { sites: [{ siteId: 1 }, { siteId: 2 }], allocation: 'shared', safetyStock: 0 } };

/** A pending/ERP entry as the release before targets wrote it. */
const entry = (value: unknown, version: number) => JSON.stringify({ value, version, at: version, source: 'erp', observedAt: version });
const key = (kind: string, code: string) => `${h.prefix}:state:inv:${kind}:${code}`;

beforeEach(async () => {
  h = await createHarness(
    [
      { Code: 'UP-1', Stock: 5, Price: 10 },
      { Code: 'UP-2', Stock: 1, Price: 20 },
    ],
    { itemsPerSite: [1, 2] },
  );
  redis = createRedis(REDIS_URL);
  // UP-1: in sync (the store took Stock 5 and Price 10 at version 100).
  await redis.hset(key('applied', 'UP-1'), { Stock: '100', Price: '100' });
  await redis.hset(key('acked', 'UP-1'), { Stock: '5', Price: '10', '@at': '1000' });
  await redis.hset(key('erp', 'UP-1'), { Stock: entry(5, 100), Price: entry(10, 100) });
  // UP-2: its stock in sync; a price change read (version 200) and queued, not sent when the old release was killed.
  await redis.hset(key('applied', 'UP-2'), { Stock: '100', Price: '100' });
  await redis.hset(key('acked', 'UP-2'), { Stock: '1', Price: '20', '@at': '1000' });
  await redis.hset(key('erp', 'UP-2'), { Stock: entry(1, 100), Price: entry(25, 200) });
  await redis.hset(key('pending', 'UP-2'), { Price: entry(25, 200) });
  rt = openInventoryRuntime(h.deps(CONFIG));
  await rt.queue.add('UP-2', { skus: ['UP-2'] }, { priority: 3 });
});

afterEach(async () => {
  await scenario?.close();
  await rt.close();
  redis.disconnect();
  await h.close();
});

it('continues the bare-Code state on the site store.siteId names: only the pending change is sent there, nothing already right again', async () => {
  // The ERP delivers every Code again to both sites (a record without SiteId goes to each): UP-1 unchanged
  // at a newer version and an older stock of it, UP-2's price as still pending, at a newer version.
  for (const siteId of [1, 2]) {
    await stage(rt, keyOf({ code: 'UP-1', siteId }), { Stock: 5, Price: 10 }, 150);
    await stage(rt, keyOf({ code: 'UP-1', siteId }), { Stock: 3 }, 50);
    await stage(rt, keyOf({ code: 'UP-2', siteId }), { Stock: 1, Price: 25 }, 250);
  }
  scenario = await startScenario(h, CONFIG);
  await scenario.settle();

  const writes = h.sim.writes.map((w): Record<string, unknown> & { code: string } => ({ code: w.code, ...w.fields }));
  // The killed release's job went to the home site's target: no PUT without a site.
  expect(writes.filter((w) => w.SiteId === undefined), 'writes naming no site').toEqual([]);
  // Home site: only the pending change, once; UP-1 and UP-2's stock were right and are not written again.
  expect(writes.filter((w) => w.SiteId === 1)).toEqual([{ code: 'UP-2', Price: 25, SiteId: 1 }]);
  // Site 2 is a new copy: everything goes there, the older stock of UP-1 never over the newer one.
  expect(writes.filter((w) => w.SiteId === 2).sort((a, b) => a.code.localeCompare(b.code))).toEqual([
    { code: 'UP-1', Stock: 5, Price: 10, SiteId: 2 },
    { code: 'UP-2', Stock: 1, Price: 25, SiteId: 2 },
  ]);
  expect(h.sim.state.itemOn('UP-1', 1)?.item).toMatchObject({ Stock: 5, Price: 10 });

  // Still the bare-Code keys for the home site, converted into one hash per target (the old keys gone);
  // site 2's state under its own target keys.
  const target = (code: string) => `${h.prefix}:state:inv:target:${code}`;
  expect(await redis.hgetall(target('UP-2'))).toMatchObject({ 'k:Stock': '1', 'k:Price': '25', 'a:Price': '250', 'p:Price': '' });
  expect(await redis.exists(key('acked', 'UP-2'), key('applied', 'UP-2'), key('erp', 'UP-2'), key('pending', 'UP-2'))).toBe(0);
  expect(await redis.exists(target(keyOf({ code: 'UP-2', siteId: 1 })))).toBe(0);
  expect(await redis.hget(target(keyOf({ code: 'UP-2', siteId: 2 })), 'k:Price')).toBe('25');
  const explained = await explainSku(h.deps(CONFIG), 'UP-1', { siteId: 1 });
  expect(explained).toMatchObject({ target: 'UP-1 (site 1)', store: { acknowledged: { Stock: 5, Price: 10 } }, nextStockWrite: null });
});
