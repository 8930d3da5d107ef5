import { randomUUID } from 'node:crypto';

import { afterAll, beforeEach, describe, expect, it } from 'vitest';

import { createRedis } from '../../../src/queue/connection.js';
import { InventoryState, packFields, packSettlements, pendingDigest, type SkuState } from '../../../src/sync/inventory/state.js';
import type { PendingEntry } from '../../../src/sync/inventory/types.js';
import { startMonitor } from '../../support/monitor.js';
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
    // The lock is `owner|deadline` in the locks hash, the deadline on Redis's clock: renewed for 10 s.
    const [lock, [seconds, micros]] = await Promise.all([redis.hget(`${prefix}:state:inv:locks`, `${prefix}:state:inv:target:L-2`), redis.time()]);
    const [owner, deadline] = String(lock).split('|');
    expect(owner).toBe('job-7');
    expect(Number(deadline) - (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000))).toBeGreaterThan(1000);
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

describe('InventoryState: one hash per target (issue 27)', () => {
  const locks = (): string => `${prefix}:state:inv:locks`;
  const target = (key: string): string => `${prefix}:state:inv:target:${key}`;

  it('frees a lock whose deadline passed (its worker died), and keeps one whose deadline has not', async () => {
    // A worker that died holding the lock: its deadline (ms, Redis's clock) is long past.
    await redis.hset(locks(), target('X-1'), 'job-dead|1000', target('X-2'), `job-alive|${Date.now() + 3_600_000}`);
    expect(await state.lockAndRead('X-1', 'job-new', 10_000)).toBeDefined();
    expect(String(await redis.hget(locks(), target('X-1'))).startsWith('job-new|')).toBe(true);
    expect(await state.lockAndRead('X-2', 'job-new', 10_000)).toBeUndefined();
    expect(await state.lock('X-2', 'job-new', 10_000)).toBe(false);
    // The dead owner's job, come back, cannot release the lock the new owner holds.
    await state.settle('X-1', [], undefined, 'job-dead');
    await state.unlock('X-1', 'job-dead');
    expect(await state.lock('X-1', 'job-other', 10_000)).toBe(false);
    // Its owner's settle releases it: the field goes.
    await state.settle('X-1', [], undefined, 'job-new');
    expect(await redis.hexists(locks(), target('X-1'))).toBe(0);
  });

  it('settles only the entry that was handled, not one of the same version merged meanwhile (another value, a later read)', async () => {
    await state.merge([{ sku: 'D-1', entries: { Stock: entry(5, 40, 100) } }]);
    const read = await state.lockAndRead('D-1', 'job-1', 10_000);
    // The snapshot diff gives a new value at the same version while the job sends the first one.
    await state.merge([{ sku: 'D-1', entries: { Stock: { ...entry(6, 40, 101), resend: true } } }]);
    await state.settle('D-1', [{ mode: 'applied', field: 'Stock', read: read!.pending.get('Stock')!, ackValue: 5 }], 1234, 'job-1');
    const after = await state.read('D-1');
    expect(after.pending.get('Stock')?.entry).toMatchObject({ value: 6, version: 40, at: 101, resend: true });
    expect(Object.fromEntries(after.acked)).toEqual({ Stock: 5, '@at': 1234 });
    expect(after.applied.get('Stock')).toBe(40);
    // Settled now: the pending field is the empty tombstone, read as absent.
    await state.settle('D-1', [{ mode: 'drop', field: 'Stock', read: after.pending.get('Stock')! }]);
    expect(await redis.hget(target('D-1'), 'p:Stock')).toBe('');
    expect((await state.read('D-1')).pending.size).toBe(0);
    // And a merge after the tombstone is pending again.
    await state.merge([{ sku: 'D-1', entries: { Stock: entry(7, 41, 102) } }]);
    expect((await state.read('D-1')).pending.get('Stock')?.entry.value).toBe(7);
  });

  it('interleaves merges and settles of many SKUs without losing a newer entry or resurrecting a settled one', async () => {
    const skus = Array.from({ length: 30 }, (_, i) => `C-${i}`);
    await state.merge(skus.map((sku) => ({ sku, entries: { Stock: entry(1, 10) } })));
    const reads = await state.lockAndReadMany(skus, 'job-c', 10_000);
    // Even SKUs get a newer stock while the job runs; the settle and the merge race.
    const even = skus.filter((_, i) => i % 2 === 0);
    await Promise.all([
      state.merge(even.map((sku) => ({ sku, entries: { Stock: entry(2, 11) } }))),
      state.settleMany(skus.map((sku) => ({ sku, settlements: [{ mode: 'applied', field: 'Stock', read: reads.get(sku)!.pending.get('Stock')!, ackValue: 1 }] })), 'job-c'),
    ]);
    const after = await state.readMany(skus);
    for (const [i, sku] of skus.entries()) {
      expect(after.get(sku)?.pending.get('Stock')?.entry.value, sku).toBe(i % 2 === 0 ? 2 : undefined);
      expect(after.get(sku)?.applied.get('Stock'), sku).toBe(10);
    }
    expect(await redis.hlen(locks())).toBe(0);
  });

  it('merges, reads and settles every SKU of a batch over several script chunks of 200, stamps only where acknowledged (400 and 450 SKUs)', async () => {
    for (const count of [400, 450]) {
      const skus = Array.from({ length: count }, (_, i) => `K${count}-${i}`);
      // Every third SKU carries a price besides its stock: chunks hold SKUs of one and of two fields.
      await state.merge(skus.map((sku, i) => ({ sku, entries: i % 3 === 0 ? { Stock: entry(i, 10), Price: entry(i + 0.5, 10) } : ({ Stock: entry(i, 10) } as Record<string, PendingEntry>) })));
      const reads = await state.lockAndReadMany(skus, `job-${count}`, 10_000);
      expect([...reads.values()].filter((read) => read !== undefined)).toHaveLength(count);
      await state.settleMany(
        skus.map((sku, i) => {
          const read = reads.get(sku)!;
          const settlements = [...read.pending].map(([field, pending]) => ({ mode: 'applied' as const, field, read: pending, ackValue: pending.entry.value }));
          // Every other SKU was acknowledged by the store (a stamp after its settlements).
          return i % 2 === 0 ? { sku, settlements, ackedAt: 1_700_000_000_000 + i } : { sku, settlements };
        }),
        `job-${count}`,
      );
      const after = await state.readMany(skus);
      for (const [i, sku] of skus.entries()) {
        const read = after.get(sku)!;
        expect(read.pending.size, sku).toBe(0);
        expect(read.acked.get('Stock'), sku).toBe(i);
        expect(read.acked.get('Price'), sku).toBe(i % 3 === 0 ? i + 0.5 : undefined);
        expect(read.applied.get('Stock'), sku).toBe(10);
        expect(read.acked.get('@at'), sku).toBe(i % 2 === 0 ? 1_700_000_000_000 + i : undefined);
      }
      expect(await redis.hlen(locks())).toBe(0);
    }
  });

  it('keeps every target\'s ERP Stock and SafetyStock in the stock figures hash, as its state hash holds them', async () => {
    await state.merge([
      { sku: 'F-1', entries: { Stock: entry(5, 10), SafetyStock: entry(1, 10), Price: entry(3, 10) } },
      { sku: 'F-2\u001f2', entries: { Stock: entry(7, 4) } },
    ]);
    // An older stock changes nothing; a newer one replaces it in both.
    await state.merge([{ sku: 'F-1', entries: { Stock: entry(4, 9) } }]);
    await state.merge([{ sku: 'F-2\u001f2', entries: { Stock: entry(8, 5) } }]);
    const figures = await redis.hgetall(`${prefix}:state:inv:stock`);
    expect(figures).toEqual({
      'Stock:F-1': JSON.stringify(entry(5, 10)),
      'SafetyStock:F-1': JSON.stringify(entry(1, 10)),
      'Stock:F-2\u001f2': JSON.stringify(entry(8, 5)),
    });
    expect(figures['Stock:F-1']).toBe(await redis.hget(target('F-1'), 'e:Stock'));
  });

  it('costs two commands per SKU to merge, two to lock and read, two to settle, and per call one HMGET and one HSET/HDEL of the locks (one HSET of the stock figures to merge)', async () => {
    const skus = Array.from({ length: 10 }, (_, i) => `N-${i}`);
    const monitor = await startMonitor();
    const { seen } = monitor;
    // A marker command read back shows that every command before it has been seen.
    const flush = async (): Promise<void> => {
      const marker = `${prefix}:marker:${randomUUID()}`;
      await redis.get(marker);
      while (!seen.some((args) => args[1] === marker)) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const counted = async (step: () => Promise<unknown>): Promise<string[]> => {
      await flush();
      seen.length = 0;
      await step();
      await flush();
      // The commands the scripts ran on this test's keys (the script calls themselves, and the marker, left out).
      return seen.filter(([command, key]) => !/^eval/i.test(command ?? '') && key?.startsWith(`${prefix}:`) && !key.includes(':marker:')).map(([command]) => String(command).toLowerCase());
    };
    try {
      await state.ensureLayout();
      const merge = await counted(() => state.merge(skus.map((sku) => ({ sku, entries: { Stock: entry(3, 5), Price: entry(9, 5) } }))));
      // Plus one HSET of the stock figures hash per call.
      expect(merge.sort()).toEqual([...Array(10).fill('hmget'), ...Array(11).fill('hset')]);
      let reads = new Map<string, SkuState | undefined>();
      const lockAndRead = await counted(async () => {
        reads = await state.lockAndReadMany(skus, 'job-n', 10_000);
      });
      expect(lockAndRead.sort()).toEqual([...Array(20).fill('hgetall'), 'hmget', 'hset']);
      const settle = await counted(() =>
        state.settleMany(
          skus.map((sku) => ({ sku, settlements: [...reads.get(sku)!.pending].map(([field, read]) => ({ mode: 'applied' as const, field, read, ackValue: read.entry.value })), ackedAt: 77 })),
          'job-n',
        ),
      );
      expect(settle.sort()).toEqual(['hdel', ...Array(11).fill('hmget'), ...Array(10).fill('hset')]);
    } finally {
      monitor.close();
    }
    expect((await state.read('N-3')).acked).toEqual(new Map<string, unknown>([['Stock', 3], ['Price', 9], ['@at', 77]]));
  });
});

describe('InventoryState: upgrade from the layout before one hash (pending, applied, acked, erp keys)', () => {
  const old = (kind: string, key: string): string => `${prefix}:state:inv:${kind}:${key}`;
  const raw = (value: unknown, version: number): string => JSON.stringify({ value, version, at: version, source: 'erp' });

  it('converts every target at first use, newest per field when a process of this release wrote first, and deletes the old keys', async () => {
    // The release before: O-1 in sync, O-2 with a pending price and a site target with pending stock; its
    // inventory queue had jobs (BullMQ's meta hash: without it there is nothing to convert, state.ts).
    await redis.hset(`${prefix}:inventory:meta`, 'opts.maxLenEvents', '10000');
    await redis.hset(old('applied', 'O-1'), { Stock: '100' });
    await redis.hset(old('acked', 'O-1'), { Stock: '5', '@at': '1000' });
    await redis.hset(old('erp', 'O-1'), { Stock: raw(5, 100) });
    await redis.hset(old('applied', 'O-2'), { Price: '100', Stock: '90' });
    await redis.hset(old('acked', 'O-2'), { Price: '20', Stock: '4' });
    await redis.hset(old('erp', 'O-2'), { Price: raw(25, 200), Stock: raw(4, 90) });
    await redis.hset(old('pending', 'O-2'), { Price: raw(25, 200), Stock: raw(3, 80) });
    await redis.hset(old('pending', 'O-3\u001f2'), { Stock: raw(8, 7) });
    // A process of this release already wrote into O-2's hash: a newer stock, and an acknowledgement.
    await redis.hset(`${prefix}:state:inv:target:O-2`, { 'p:Stock': raw(6, 95), 'e:Stock': raw(6, 95), 'k:Price': '21' });
    await redis.hset(`${prefix}:state:inv:stock`, { 'Stock:O-2': raw(6, 95) });

    const [o1, o2, o3] = await Promise.all([state.read('O-1'), new InventoryState(redis, prefix).read('O-2'), state.read('O-3\u001f2')]);
    expect(o1).toEqual({ pending: new Map(), applied: new Map([['Stock', 100]]), acked: new Map<string, unknown>([['Stock', 5], ['@at', 1000]]), erp: new Map([['Stock', JSON.parse(raw(5, 100))]]), reservations: {} });
    expect([...o2.pending].map(([field, read]) => [field, read.entry.value, read.entry.version])).toEqual(expect.arrayContaining([['Price', 25, 200], ['Stock', 6, 95]]));
    expect(o2.pending.size).toBe(2);
    expect(Object.fromEntries(o2.applied)).toEqual({ Price: 100, Stock: 90 });
    expect(Object.fromEntries(o2.acked)).toEqual({ Price: 21, Stock: 4 });
    expect(o2.erp.get('Stock')?.value).toBe(6);
    expect(o2.erp.get('Price')?.value).toBe(25);
    expect(o3.pending.get('Stock')?.entry.value).toBe(8);
    // The stock figures hash holds each target's ERP stock as its state does (O-2's newer one stays).
    expect(await redis.hmget(`${prefix}:state:inv:stock`, 'Stock:O-1', 'Stock:O-2', 'Stock:O-3\u001f2')).toEqual([raw(5, 100), raw(6, 95), null]);
    expect(await redis.exists(...['pending', 'applied', 'acked', 'erp'].flatMap((kind) => ['O-1', 'O-2', 'O-3\u001f2'].map((key) => old(kind, key))))).toBe(0);
    expect(await redis.get(`${prefix}:state:inv:layout`)).toBe('2');
    expect(await redis.exists(`${prefix}:state:inv:layout:lock`)).toBe(0);

    // Converted once: old keys written afterwards (nothing of this release writes them) are not read.
    await redis.hset(old('pending', 'O-1'), { Price: raw(1, 1) });
    expect((await new InventoryState(redis, prefix).read('O-1')).pending.size).toBe(0);
  });

  it('keeps per field the higher applied version when a process of this release applied one first', async () => {
    await redis.hset(`${prefix}:inventory:meta`, 'opts.maxLenEvents', '10000');
    // The old key's versions: Stock 90 (older than the 95 this release applied since), Price 100 (newer than 50).
    await redis.hset(old('applied', 'V-1'), { Stock: '90', Price: '100' });
    await redis.hset(`${prefix}:state:inv:target:V-1`, { 'a:Stock': '95', 'a:Price': '50' });

    const converted = await state.read('V-1');
    // The higher of the two, per field (hand-computed): Stock max(90, 95), Price max(100, 50).
    expect(Object.fromEntries(converted.applied)).toEqual({ Stock: 95, Price: 100 });
    expect(await redis.exists(old('applied', 'V-1'))).toBe(0);
  });

  it('marks a deployment whose inventory queue never had a job converted at once, without walking the keyspace', async () => {
    await state.ensureLayout();
    expect(await redis.get(`${prefix}:state:inv:layout`)).toBe('2');
    expect(await redis.exists(`${prefix}:state:inv:layout:lock`)).toBe(0);
  });

  it('lets a second process wait for the one converting instead of converting beside it', async () => {
    await redis.hset(old('pending', 'W-1'), { Stock: raw(2, 5) });
    await redis.hset(`${prefix}:inventory:meta`, 'opts.maxLenEvents', '10000');
    // Another process holds the conversion's lock; this one waits until it marks the layout done.
    await redis.set(`${prefix}:state:inv:layout:lock`, 'other', 'PX', 60_000);
    let done = false;
    const waiting = state.ensureLayout().then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(done).toBe(false);
    await redis.set(`${prefix}:state:inv:layout`, '2');
    await waiting;
    expect(done).toBe(true);
    // The other process converted (here: did not): this one did not touch the old keys.
    expect(await redis.exists(old('pending', 'W-1'))).toBe(1);
  });
});

describe('the arguments of MERGE and SETTLE, one per SKU', () => {
  const US = '\u001f';
  const RS = '\u001e';

  it('packs a SKU\'s fields as field US entry, joined by RS', () => {
    expect(packFields({ Stock: entry(5, 20), Price: entry(9.5, 21, 22, 'prices') })).toBe(
      `Stock${US}{"value":5,"version":20,"at":20,"source":"erp"}${RS}Price${US}{"value":9.5,"version":21,"at":22,"source":"prices"}`,
    );
    expect(packFields({})).toBe('');
  });

  it('packs settlements as mode, field, digest, version and acked value joined by US, the stamp last, joined by RS', () => {
    const raw = '{"value":5,"version":20,"at":20,"source":"erp"}';
    const read = { raw, entry: entry(5, 20) };
    const digest = pendingDigest(raw);
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    expect(
      packSettlements(
        [
          { mode: 'applied', field: 'Stock', read, ackValue: 5 },
          { mode: 'drop', field: 'Price', read: { raw: '', entry: entry(1, 7) } },
          { mode: 'applied', field: 'Stock@moves', read: { raw: '', entry: entry(0, 3) } },
        ],
        1_700_000_000_123,
      ),
    ).toBe(`applied${US}Stock${US}${digest}${US}20${US}5${RS}drop${US}Price${US}${US}7${US}${RS}applied${US}Stock@moves${US}${US}3${US}${RS}stamp${US}@at${US}${US}0${US}1700000000123`);
    // Nothing to settle: an empty argument (the lock is still released); a stamp alone has no RS before it.
    expect(packSettlements([], undefined)).toBe('');
    expect(packSettlements([], 5)).toBe(`stamp${US}@at${US}${US}0${US}5`);
    // An acked value is written as JSON: a text keeps its quotes.
    expect(packSettlements([{ mode: 'applied', field: 'Name', read, ackValue: 'a "b"' }], undefined)).toBe(`applied${US}Name${US}${digest}${US}20${US}"a \\"b\\""`);
  });

  it('refuses a field name holding either separator instead of packing it', () => {
    expect(() => packFields({ [`Sto${RS}ck`]: entry(1, 1) })).toThrow(/field name .* holds a control character/);
    expect(() => packFields({ [`Sto${US}ck`]: entry(1, 1) })).toThrow(/field name .* holds a control character/);
    const read = { raw: '', entry: entry(1, 1) };
    expect(() => packSettlements([{ mode: 'drop', field: `P${RS}`, read }], undefined)).toThrow(/holds a control character/);
  });

  it('settles a value holding every JSON escape (a control character as \\u001f, quotes, a backslash) as the store acknowledged it', async () => {
    const odd = `tab\tquote"slash\\unit${US}record${RS}`;
    await state.merge([{ sku: 'J-1', entries: { Name: entry(odd, 3), Stock: entry(2, 3) } }]);
    const read = await state.read('J-1');
    expect(read.pending.get('Name')?.entry.value).toBe(odd);
    await state.settle('J-1', [
      { mode: 'applied', field: 'Name', read: read.pending.get('Name')!, ackValue: odd },
      { mode: 'applied', field: 'Stock', read: read.pending.get('Stock')!, ackValue: 2 },
    ], 1_700_000_000_000);
    const after = await state.read('J-1');
    expect(after.acked.get('Name')).toBe(odd);
    expect(after.acked.get('Stock')).toBe(2);
    expect(after.acked.get('@at')).toBe(1_700_000_000_000);
    expect(after.applied.get('Name')).toBe(3);
    expect(after.pending.size).toBe(0);
  });
});
