/**
 * Upgrading in place to targets (issue 20): the Redis state of the release before targets (per-code
 * keys `{prefix}:state:inv:{kind}:{Code}`, JSON entries, a job carrying `skus`) is the default target's,
 * read without any migration of keys (and since issue 27 converted into one hash per target at first
 * use): nothing in sync is pushed again, a pending change is sent, and no older value is sent over a newer one. The fixture is the exact key layout of that release (commit 0636fb6),
 * written with literal keys rather than through the new code.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { createRedis } from '../../../src/queue/connection.js';
import { explainSku } from '../../../src/sync/inventory/explain.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import { type Scenario, startScenario } from '../../helpers/erp-scenario.js';
import { createHarness, type Harness, REDIS_URL, stage } from './harness.js';

let h: Harness;
let redis: Redis;
let rt: InventoryRuntime;
let scenario: Scenario | undefined;

/** A pending/ERP entry as the release before targets wrote it. */
const entry = (value: unknown, version: number) => JSON.stringify({ value, version, at: version, source: 'erp', observedAt: version });

beforeEach(async () => {
  h = await createHarness([
    { Code: 'UP-1', Stock: 5, Price: 10 },
    { Code: 'UP-2', Stock: 1, Price: 20 },
  ]);
  redis = createRedis(REDIS_URL);
  const key = (kind: string, code: string) => `${h.prefix}:state:inv:${kind}:${code}`;
  // UP-1: in sync (the store took Stock 5 and Price 10 at version 100).
  await redis.hset(key('applied', 'UP-1'), { Stock: '100', Price: '100' });
  await redis.hset(key('acked', 'UP-1'), { Stock: '5', Price: '10', '@at': '1000' });
  await redis.hset(key('erp', 'UP-1'), { Stock: entry(5, 100), Price: entry(10, 100) });
  // UP-2: a price change read (version 200) and queued, not sent yet when the old release stopped.
  await redis.hset(key('applied', 'UP-2'), { Price: '100' });
  await redis.hset(key('acked', 'UP-2'), { Price: '20', '@at': '1000' });
  await redis.hset(key('erp', 'UP-2'), { Price: entry(25, 200) });
  await redis.hset(key('pending', 'UP-2'), { Price: entry(25, 200) });
  rt = openInventoryRuntime(h.deps());
  await rt.queue.add('UP-2', { skus: ['UP-2'] }, { priority: 3 });
});

afterEach(async () => {
  await scenario?.close();
  await rt.close();
  redis.disconnect();
  await h.close();
});

it('reads the state of the release before targets as the default target: no re-push, no pending change lost, no older value sent', async () => {
  // The ERP delivers again: UP-1's values unchanged at a newer version, an older stock of UP-1, and an
  // older price of UP-2 than the one still pending.
  await stage(rt, 'UP-1', { Price: 10 }, 150);
  await stage(rt, 'UP-1', { Stock: 3 }, 50);
  await stage(rt, 'UP-2', { Price: 22 }, 150);
  scenario = await startScenario(h, {});
  await scenario.settle();

  // Only the pending change went out, with its newest value; nothing of UP-1.
  expect(h.sim.writes.map((w) => ({ code: w.code, ...w.fields }))).toEqual([{ code: 'UP-2', Price: 25 }]);
  expect(h.sim.state.items.get('UP-1')?.item).toMatchObject({ Stock: 5, Price: 10 });
  // Still the bare Code: the default target's state, converted into its one hash (the old keys gone).
  expect(await redis.hgetall(`${h.prefix}:state:inv:target:UP-2`)).toMatchObject({ 'k:Price': '25', 'a:Price': '200', 'p:Price': '' });
  expect(await redis.exists(...['pending', 'applied', 'acked', 'erp'].map((kind) => `${h.prefix}:state:inv:${kind}:UP-2`))).toBe(0);
  const explained = await explainSku(h.deps(), 'UP-1');
  expect(explained).toMatchObject({ target: 'UP-1', store: { acknowledged: { Stock: 5, Price: 10 }, versions: { Stock: 100, Price: 150 } }, nextStockWrite: null });
});
