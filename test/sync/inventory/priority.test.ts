/**
 * Stock-outs first: with a backlog of price changes queued, a change that lowers a SKU's stock (and
 * one that raises it) is written before the backlog. The order is read from the simulator's write log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FlowDeps } from '../../../src/sync/flow.js';
import { enqueueSkus } from '../../../src/sync/inventory/enqueue.js';
import { type InventoryFlow, startInventoryFlow } from '../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import type { PendingEntry } from '../../../src/sync/inventory/types.js';
import { waitFor } from '../../../src/wait-for.js';
import { createHarness, type Harness } from './harness.js';

const BACKLOG = Array.from({ length: 300 }, (_, i) => `P-${String(i).padStart(3, '0')}`);

let h: Harness;
let deps: FlowDeps;
let rt: InventoryRuntime;

/** Merges and queues values as the producer does (the merge decides each job's priority). */
async function produce(values: Record<string, Record<string, unknown>>, version: number): Promise<void> {
  const items = Object.entries(values).map(([sku, fields]) => ({
    sku,
    entries: Object.fromEntries(Object.entries(fields).map(([field, value]): [string, PendingEntry] => [field, { value, version, at: Date.now(), source: 'test' }])),
  }));
  const priorities = await rt.state.merge(items);
  await enqueueSkus(rt.queue, Object.keys(values), { priorities });
}

beforeAll(async () => {
  h = await createHarness([...BACKLOG, 'OUT-1', 'UP-1'].map((Code) => ({ Code, Stock: 5, Price: 10 })));
  deps = h.deps({ inventory: { concurrency: 1 } });
  rt = openInventoryRuntime(deps);
});

afterAll(async () => {
  await rt.close();
  await h.close();
});

describe('job priorities', () => {
  it('writes a stock-out, then a stock increase, before a backlog of price changes queued earlier', async () => {
    // Known figures first, so that the next ones are a decrease and an increase.
    let flow: InventoryFlow = await startInventoryFlow(deps, { role: 'worker' });
    await produce({ 'OUT-1': { Stock: 5 }, 'UP-1': { Stock: 5 } }, 1);
    await waitFor(() => h.sim.writes.length === 2, { message: 'the first figures' });
    await flow.close(1000);

    // OUT-1 is queued first as a price change, absorbed later by the stock-out: its job moves up.
    await produce({ 'OUT-1': { Price: 11 } }, 2);
    await produce(Object.fromEntries(BACKLOG.map((sku) => [sku, { Price: 12 }])), 2);
    await produce({ 'UP-1': { Stock: 9 } }, 3);
    await produce({ 'OUT-1': { Stock: 0 } }, 3);
    const start = h.sim.writes.length;

    flow = await startInventoryFlow(deps, { role: 'worker' });
    try {
      await waitFor(() => h.sim.writes.length === start + BACKLOG.length + 2, { timeoutMs: 60_000, message: 'the backlog to drain' });
    } finally {
      await flow.close(1000);
    }
    const order = h.sim.writes.slice(start).map((w) => w.code);
    expect(order.slice(0, 2)).toEqual(['OUT-1', 'UP-1']);
    expect(h.sim.writes[start]?.fields).toEqual({ Stock: 0, Price: 11 });
    expect(order.slice(2).sort()).toEqual(BACKLOG);
  });
});
