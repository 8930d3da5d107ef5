/**
 * The snapshot diff in chunks (issue 27): what the read stages in Redis between the chunks keeps every
 * rule of the whole-map diff. A source in memory gives the rows, so that the chunks (of the source, and
 * of 1000 keys compared per round trip) fall where the test says.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { ChangeSource, RejectedRecord, SnapshotChunk } from '../../../../src/erp/types.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { DiffState } from '../../../../src/sync/inventory/snapshot/diff-state.js';
import { diffSource } from '../../../../src/sync/inventory/snapshot/snapshot-diff.js';
import { createHarness, type Harness } from '../harness.js';

const code = (i: number): string => `C-${String(i).padStart(5, '0')}`;
const fields = (i: number, stock = i % 100) => ({ Code: code(i), Stock: stock });

/** A source whose snapshot is `chunks` (each rows, by number, and the rows refused whole). */
function source(chunks: Array<{ rows: Array<Record<string, unknown>>; rejected?: RejectedRecord[] }>, name = 'mem'): ChangeSource {
  return {
    name,
    kind: 'sql',
    readChanges: () => Promise.reject(new Error('not polled')),
    close: () => Promise.resolve(),
    async *snapshot() {
      for (const { rows, rejected } of chunks) {
        const chunk: SnapshotChunk = rows.map((row, i) => ({ ref: `row ${i}`, cursor: null, fields: row }));
        if (rejected) chunk.rejected = rejected;
        yield chunk;
      }
    },
  };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const options = { vanished: { action: 'zero' as const, maxFraction: 1 }, otherSources: [] };

let h: Harness;
let rt: InventoryRuntime;
let diffState: DiffState;

beforeEach(async () => {
  h = await createHarness(0);
  rt = openInventoryRuntime(h.deps());
  diffState = new DiffState(rt.redis, h.prefix);
});

afterEach(async () => {
  await rt.close();
  await h.close();
});

describe('snapshot diff in chunks', () => {
  it('counts a key read twice as changed the second time, in another round of 1000 keys or in the same', async () => {
    // 1500 rows in chunks of 500: C-00003 again after the 1000th row (another round), C-00010 twice in the last chunk.
    const rows = range(1, 1500).map((i) => fields(i));
    const chunks = () => [{ rows: rows.slice(0, 500) }, { rows: rows.slice(500, 1000) }, { rows: [...rows.slice(1000), fields(3), fields(1200), fields(1200)] }];
    expect(await diffSource(rt, source(chunks()), options)).toMatchObject({ read: 1503, previous: 0, changed: 1500, queued: 1500 });
    // Unchanged: only the second reads count as changed (C-00003 and C-01200; C-01200's third read is the same key).
    expect(await diffSource(rt, source(chunks()), options)).toMatchObject({ read: 1503, previous: 1500, changed: 2, queued: 2, vanished: 0 });
    expect((await diffState.fingerprints('mem')).size).toBe(1500);
  });

  it("keeps a refused row's fingerprint, so that it comes back unchanged without a write", async () => {
    const rows = range(1, 20).map((i) => fields(i));
    await diffSource(rt, source([{ rows }]), options);
    const before = await diffState.fingerprints('mem');
    const refused: RejectedRecord = { ref: 'row 5', issues: [{ record: code(5), field: 'Stock', value: 'x', rule: 'must be a number' }] };
    expect(await diffSource(rt, source([{ rows: rows.filter((_, k) => k !== 4), rejected: [refused] }]), options)).toMatchObject({
      read: 20,
      refused: 1,
      changed: 0,
      vanished: 0,
      held: 0,
    });
    expect((await diffState.fingerprints('mem')).get(code(5))).toBe(before.get(code(5)));
    expect(await diffSource(rt, source([{ rows }]), options)).toMatchObject({ changed: 0, queued: 0, vanished: 0 });
  });

  it('ignores what a diff cut short by a crash left staged, and leaves nothing staged itself', async () => {
    const rows = range(1, 20).map((i) => fields(i));
    await diffSource(rt, source([{ rows }]), options);
    // A crashed diff's staging: C-00020 read, C-00007 changed to 999.
    const staged = (kind: string) => `${h.prefix}:state:inv:${kind}:mem`;
    await rt.redis.hset(staged('diff-next'), code(20), 'xxxxxxxxxxx');
    await rt.redis.hset(staged('diff-rows'), code(7), JSON.stringify([code(7), null, { Stock: 999 }]));
    // C-00020 is gone now: vanished (Stock 0), and C-00007 keeps its value (7).
    expect(await diffSource(rt, source([{ rows: rows.slice(0, 19) }]), options)).toMatchObject({ changed: 0, vanished: 1, held: 0 });
    const pending = (await rt.state.read(code(7))).pending;
    expect(pending.get('Stock')?.entry.value).toBe(7);
    expect((await rt.state.read(code(20))).pending.get('Stock')?.entry.value).toBe(0);
    expect((await diffState.fingerprints('mem')).size).toBe(19);
    expect(await rt.redis.keys(`${h.prefix}:state:inv:diff-*`)).toEqual([]);
  });

  it('counts every SKU vanished, over every page of those staged as gone', async () => {
    // 2500 SKUs, then a snapshot of the first 100: 2400 gone, more than one page of 1000 (HSCAN) of the staging.
    const rows = range(1, 2500).map((i) => fields(i));
    await diffSource(rt, source([{ rows: rows.slice(0, 1000) }, { rows: rows.slice(1000) }]), options);
    expect(await diffSource(rt, source([{ rows: rows.slice(0, 100) }]), options)).toMatchObject({ read: 100, previous: 2500, changed: 0, vanished: 2400, held: 0 });
    const counted = (await rt.metrics.vanished.get()).values.filter(({ labels }) => labels.source === 'mem' && labels.reason === 'absent').reduce((sum, { value }) => sum + value, 0);
    expect(counted, 'the metric grows by the SKUs vanished').toBe(2400);
    expect((await diffState.fingerprints('mem')).size).toBe(100);
  });

  it('queues exactly the changed SKUs and vanishes exactly the absent ones of 3000 (three rounds of 1000, pages of the previous)', async () => {
    const rows = range(1, 3000).map((i) => fields(i));
    await diffSource(rt, source([{ rows: rows.slice(0, 1700) }, { rows: rows.slice(1700) }]), options);
    // Every 100th row changed (Stock 500 + i % 100 instead of i % 100): 30; every 500th less 1 (499, 999, …) absent: 6.
    const changed = range(1, 3000).filter((i) => i % 100 === 0);
    const absent = range(1, 3000).filter((i) => i % 500 === 499);
    const next = range(1, 3000)
      .filter((i) => !absent.includes(i))
      .map((i) => fields(i, i % 100 === 0 ? 500 + (i % 100) : i % 100));
    expect(await diffSource(rt, source([{ rows: next.slice(0, 1000) }, { rows: next.slice(1000) }]), options)).toMatchObject({
      read: 2994,
      previous: 3000,
      changed: 30,
      queued: 30,
      vanished: 6,
      held: 0,
    });
    for (const i of changed) expect((await rt.state.read(code(i))).pending.get('Stock')?.entry.value, `${code(i)} queued with its new Stock`).toBe(500);
    for (const i of absent) expect((await rt.state.read(code(i))).pending.get('Stock')?.entry.value, `${code(i)} vanished (zeroed)`).toBe(0);
    const prints = await diffState.fingerprints('mem');
    expect(prints.size).toBe(2994);
    for (const i of absent) expect(prints.has(code(i)), `${code(i)} loses its fingerprint`).toBe(false);
    // Nothing changed since: nothing queued, nothing vanished.
    expect(await diffSource(rt, source([{ rows: next }]), options)).toMatchObject({ previous: 2994, changed: 0, queued: 0, vanished: 0 });
  });

  it('queues nothing after an upgrade: the fingerprints an earlier release stored still compare equal', async () => {
    // What a release before the fingerprint's feature detection stored for C-00001..C-00003 of Stock 1..3:
    // SHA-1 of [["Stock",i]], base64url, 11 characters (computed apart, Python's hashlib).
    await rt.redis.hset(`${h.prefix}:state:inv:fp:mem`, code(1), 'sADoTyFVvhC', code(2), 'tAMJo_cNtoR', code(3), 'K1bY6ujEyfu');
    expect(await diffSource(rt, source([{ rows: range(1, 3).map((i) => fields(i)) }]), options)).toMatchObject({ previous: 3, changed: 0, queued: 0, vanished: 0 });
  });

  it('fails when Redis answers an error mid-read: nothing queued, the fingerprints as they were, no staging left', async () => {
    const rows = range(1, 1500).map((i) => fields(i));
    await diffSource(rt, source([{ rows }]), options);
    const before = await diffState.fingerprints('mem');
    const waiting = await rt.queue.getJobCounts('waiting', 'prioritized', 'delayed');
    // Every row changed; after the first round of 1000 is staged, the staged fingerprints' key is made a string.
    const changedRows = range(1, 1500).map((i) => fields(i, 900));
    const failing: ChangeSource = {
      ...source([]),
      async *snapshot() {
        yield changedRows.slice(0, 1000).map((row, i) => ({ ref: `row ${i}`, cursor: null, fields: row }));
        await rt.redis.del(`${h.prefix}:state:inv:diff-next:mem`);
        await rt.redis.set(`${h.prefix}:state:inv:diff-next:mem`, 'not a hash');
        yield changedRows.slice(1000).map((row, i) => ({ ref: `row ${i}`, cursor: null, fields: row }));
      },
    };
    await expect(diffSource(rt, failing, options)).rejects.toThrow(/WRONGTYPE/);
    expect(await rt.queue.getJobCounts('waiting', 'prioritized', 'delayed')).toEqual(waiting);
    expect((await rt.state.read(code(1))).pending.get('Stock')?.entry.value, 'the changed value is not merged').toBe(1);
    expect(await diffState.fingerprints('mem')).toEqual(before);
    expect(await rt.redis.keys(`${h.prefix}:state:inv:diff-*`)).toEqual([]);
  });

  it('does not vanish a SKU absent from this snapshot that another source still provides; that source keeps it', async () => {
    const rows = range(1, 20).map((i) => fields(i));
    // 'other' last read C-00001..C-00005 whole: it provides them.
    await diffSource(rt, source([{ rows: rows.slice(0, 5) }], 'other'), options);
    await diffSource(rt, source([{ rows }]), options);
    // mem no longer lists C-00001..C-00005, nor C-00020: only C-00020 vanishes.
    expect(await diffSource(rt, source([{ rows: rows.slice(5, 19) }]), { ...options, otherSources: ['other'] })).toMatchObject({ read: 14, previous: 20, changed: 0, vanished: 1, held: 0 });
    expect((await rt.state.read(code(20))).pending.get('Stock')?.entry.value).toBe(0);
    for (const i of [1, 5]) expect((await rt.state.read(code(i))).pending.get('Stock')?.entry.value, `${code(i)} is not zeroed`).toBe(i);
    // mem drops their fingerprints (not its SKUs any more); other keeps its own.
    expect((await diffState.fingerprints('mem')).size).toBe(14);
    expect((await diffState.fingerprints('other')).size).toBe(5);
  });
});
