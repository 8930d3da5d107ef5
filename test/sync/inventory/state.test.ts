import { randomUUID } from 'node:crypto';

import { afterAll, beforeEach, describe, expect, it } from 'vitest';

import { createRedis } from '../../../src/queue/connection.js';
import { InventoryState } from '../../../src/sync/inventory/state.js';
import type { PendingEntry } from '../../../src/sync/inventory/types.js';
import { deleteKeys } from '../../support/redis.js';

const redis = createRedis('redis://127.0.0.1:6379/0');
/** The file's prefix; each test works under a prefix of its own below it, so one SCAN cleans up after all. */
const base = `test-${randomUUID()}`;
let tests = 0;
let prefix: string;
let state: InventoryState;

// Each test starts from an empty state of its own, so none depends on what another wrote.
beforeEach(() => {
  tests += 1;
  prefix = `${base}:t${tests}`;
  state = new InventoryState(redis, prefix);
});

afterAll(async () => {
  await deleteKeys(redis, base);
  redis.disconnect();
});

const entry = (value: unknown, version: number, at = version, source = 'erp'): PendingEntry => ({ value, version, at, source });

describe('InventoryState.merge', () => {
  it('keeps per field the value with the highest version, whatever the merge order', async () => {
    await state.merge([{ sku: 'M-1', entries: { Stock: entry(5, 20), Price: entry(10, 5) } }]);
    await state.merge([{ sku: 'M-1', entries: { Stock: entry(3, 10), Price: entry(12, 6) } }]);
    const { pending } = await state.read('M-1');
    expect(pending.get('Stock')?.entry.value).toBe(5);
    expect(pending.get('Price')?.entry.value).toBe(12);
  });

  it('lets the latest write win among equal versions', async () => {
    await state.merge([{ sku: 'M-2', entries: { Stock: entry(1, 7, 100) } }]);
    await state.merge([{ sku: 'M-2', entries: { Stock: entry(2, 7, 101) } }]);
    expect((await state.read('M-2')).pending.get('Stock')?.entry.value).toBe(2);
  });

  it('keeps the first read time of a figure read again at the same version, in pending and in the ERP values', async () => {
    await state.merge([{ sku: 'M-9', entries: { Stock: { ...entry(4, 500, 100), observedAt: 1_700_000_000_100 } } }]);
    await state.merge([{ sku: 'M-9', entries: { Stock: { ...entry(4, 500, 200), observedAt: 1_700_000_000_200 } } }]);
    let read = await state.read('M-9');
    expect(read.erp.get('Stock')).toMatchObject({ at: 200, observedAt: 1_700_000_000_100 });
    expect(read.pending.get('Stock')?.entry).toMatchObject({ at: 200, observedAt: 1_700_000_000_100 });
    // A new version is a new figure, read when it was read.
    await state.merge([{ sku: 'M-9', entries: { Stock: { ...entry(3, 501, 300), observedAt: 1_700_000_000_300 } } }]);
    read = await state.read('M-9');
    expect(read.erp.get('Stock')?.observedAt).toBe(1_700_000_000_300);
  });

  it('merges stock from one source and prices from another into one SKU', async () => {
    await state.merge([{ sku: 'M-3', entries: { Stock: entry(4, 1, 1, 'stock') } }]);
    await state.merge([{ sku: 'M-3', entries: { Price: entry(9.5, 1, 1, 'prices') } }]);
    const { pending } = await state.read('M-3');
    expect([...pending.keys()].sort()).toEqual(['Price', 'Stock']);
    expect(pending.get('Price')?.entry.source).toBe('prices');
  });

  it('keeps millisecond timestamp versions exact', async () => {
    await state.merge([{ sku: 'M-4', entries: { Stock: entry(1, 1_714_564_800_123) } }]);
    await state.merge([{ sku: 'M-4', entries: { Stock: entry(2, 1_714_564_800_122, 2e12) } }]);
    expect((await state.read('M-4')).pending.get('Stock')?.entry).toMatchObject({ value: 1, version: 1_714_564_800_123 });
  });
});

describe('InventoryState.settle', () => {
  it('records applied versions and acked values and clears only the entries that were handled', async () => {
    await state.merge([{ sku: 'S-1', entries: { Stock: entry(5, 10), Price: entry(20, 10) } }]);
    const before = await state.read('S-1');
    // A newer Stock arrives while the first one is being sent.
    await state.merge([{ sku: 'S-1', entries: { Stock: entry(6, 11) } }]);
    await state.settle('S-1', [
      { mode: 'applied', field: 'Stock', read: before.pending.get('Stock')!, ackValue: 5 },
      { mode: 'applied', field: 'Price', read: before.pending.get('Price')!, ackValue: 20 },
    ]);
    const after = await state.read('S-1');
    expect([...after.pending.keys()]).toEqual(['Stock']);
    expect(after.pending.get('Stock')?.entry.value).toBe(6);
    expect(Object.fromEntries(after.applied)).toEqual({ Stock: 10, Price: 10 });
    expect(Object.fromEntries(after.acked)).toEqual({ Stock: 5, Price: 20 });
  });

  it('never lowers an applied version', async () => {
    await state.merge([{ sku: 'S-2', entries: { Stock: entry(5, 10) } }]);
    let read = await state.read('S-2');
    await state.settle('S-2', [{ mode: 'applied', field: 'Stock', read: read.pending.get('Stock')!, ackValue: 5 }]);
    await state.merge([{ sku: 'S-2', entries: { Stock: entry(4, 8) } }]);
    read = await state.read('S-2');
    await state.settle('S-2', [{ mode: 'applied', field: 'Stock', read: read.pending.get('Stock')! }]);
    read = await state.read('S-2');
    expect(read.applied.get('Stock')).toBe(10);
    expect(read.acked.get('Stock')).toBe(5);
    expect(read.pending.size).toBe(0);
  });

  it('drops an entry without recording it', async () => {
    await state.merge([{ sku: 'S-3', entries: { Stock: entry(-1, 3) } }]);
    const read = await state.read('S-3');
    await state.settle('S-3', [{ mode: 'drop', field: 'Stock', read: read.pending.get('Stock')! }]);
    const after = await state.read('S-3');
    expect(after.pending.size + after.applied.size + after.acked.size).toBe(0);
  });
});

describe('InventoryState locks', () => {
  it('gives a SKU lock to one owner at a time and lets only that owner release it', async () => {
    expect(await state.lock('L-1', 'a', 10_000)).toBe(true);
    expect(await state.lock('L-1', 'b', 10_000)).toBe(false);
    await state.unlock('L-1', 'b');
    expect(await state.lock('L-1', 'b', 10_000)).toBe(false);
    await state.unlock('L-1', 'a');
    expect(await state.lock('L-1', 'b', 10_000)).toBe(true);
  });

  it('lets the owner of a SKU lock take it again, renewing it (a job restarted after its worker died)', async () => {
    expect(await state.lock('L-2', 'job-7', 50)).toBe(true);
    expect(await state.lock('L-2', 'job-7', 10_000)).toBe(true);
    expect(await redis.pttl(`${prefix}:state:inv:lock:L-2`)).toBeGreaterThan(1000);
    expect(await state.lock('L-2', 'job-8', 10_000)).toBe(false);
  });
});

describe('InventoryState.lockAndRead and settle with unlock (a job\'s two round trips)', () => {
  it('reads what read() reads only when the lock is taken, and settling with the owner releases it', async () => {
    await state.merge([{ sku: 'LR-1', entries: { Stock: entry(8, 3) } }]);
    await state.settle('LR-1', [{ mode: 'applied', field: 'Price', read: { raw: 'x', entry: entry(2.5, 1) }, ackValue: 2.5 }]);
    const taken = await state.lockAndRead('LR-1', 'job-1', 10_000);
    expect(taken).toEqual(await state.read('LR-1'));
    expect(await state.lockAndRead('LR-1', 'job-2', 10_000)).toBeUndefined();
    const stock = taken!.pending.get('Stock')!;
    await state.settle('LR-1', [{ mode: 'applied', field: 'Stock', read: stock, ackValue: 8 }], undefined, 'job-2');
    expect(await state.lock('LR-1', 'job-2', 10_000)).toBe(false);
    await state.settle('LR-1', [], undefined, 'job-1');
    expect(await state.lockAndRead('LR-1', 'job-2', 10_000)).toMatchObject({ pending: new Map(), applied: new Map([['Stock', 3], ['Price', 1]]) });
  });
});

describe('InventoryState cursors', () => {
  it('stores a cursor per source keeping numbers and strings apart', async () => {
    expect(await state.cursors.get('never-polled')).toBeUndefined();
    await state.cursors.set('a', 42);
    await state.cursors.set('b', '42');
    await state.cursors.set('c', null);
    expect([await state.cursors.get('a'), await state.cursors.get('b'), await state.cursors.get('c')]).toEqual([42, '42', null]);
  });

  it('reads applied versions of several SKUs at once', async () => {
    await state.merge([
      { sku: 'S-1', entries: { Stock: entry(5, 10), Price: entry(20, 10) } },
      { sku: 'S-2', entries: { Stock: entry(1, 3) } },
    ]);
    for (const sku of ['S-1', 'S-2']) {
      const read = await state.read(sku);
      await state.settle(
        sku,
        [...read.pending].map(([field, entryRead]) => ({ mode: 'applied' as const, field, read: entryRead })),
      );
    }
    const versions = await state.appliedVersions(['S-1', 'S-2', 'unknown']);
    expect(Object.fromEntries(versions.get('S-1')!)).toEqual({ Stock: 10, Price: 10 });
    expect(Object.fromEntries(versions.get('S-2')!)).toEqual({ Stock: 3 });
    expect(versions.get('unknown')?.size).toBe(0);
  });
});
