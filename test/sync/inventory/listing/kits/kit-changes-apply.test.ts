/**
 * The change feed's two steps apart from any ERP: `kitBatch` sorts a batch of change rows by kit (a kit's
 * rows replace it whole, a row without component and quantity empties it, a cut kit is held back), and
 * `applyKitChanges` writes them to the catalog on real Redis, touching only the kits read. Expected
 * compositions and index contents written out by hand.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeEach, describe, expect, it } from 'vitest';

import type { SourceRecord } from '../../../../../src/erp/types.js';
import { createRedis } from '../../../../../src/queue/connection.js';
import { applyKitChanges, kitBatch, type KitRow, redisKitCatalog, writeComposition } from '../../../../../src/sync/inventory/listing/kits/index.js';
import { deleteKeys } from '../../../../support/redis.js';

const redis = createRedis('redis://127.0.0.1:6379/0');
const base = `test-${randomUUID()}`;
let tests = 0;
let prefix: string;

beforeEach(() => {
  tests += 1;
  prefix = `${base}:t${tests}`;
});

afterAll(async () => {
  await deleteKeys(redis, base);
  redis.disconnect();
});

const row = (kit: string, component: string, quantity: number): KitRow => ({ kit, component, quantity });
/** A change row as the source gives it (a null component and quantity are left out of `fields`). */
const record = (cursor: string, kit: string, component?: string, quantity?: unknown): SourceRecord => ({
  ref: `bundles row cursor=${cursor} kit=${kit}`,
  cursor,
  fields: { kit, ...(component === undefined ? {} : { component }), ...(quantity === undefined ? {} : { quantity }) },
});
const T1 = '2026-01-01T10:00:00.000Z';
const T2 = '2026-01-01T10:05:00.000Z';

describe('kitBatch', () => {
  it('gives each kit its rows, a kit with only an empty row none (null), and leaves out a kit whose every row is refused', () => {
    const { changes, refused, held } = kitBatch(
      { records: [record(T1, 'GIFT', 'MUG', 2), record(T1, 'GIFT', 'BOX', 1), record(T1, 'OLD'), record(T2, 'BAD', 'CAN', 0), record(T2, 'HALF', 'CAN', 1), record(T2, 'HALF', '', 1)], rejected: [] },
      false,
    );
    expect(Object.fromEntries(changes)).toEqual({ GIFT: [row('GIFT', 'MUG', 2), row('GIFT', 'BOX', 1)], OLD: null, HALF: [row('HALF', 'CAN', 1)] });
    expect(refused.map((entry) => [entry.kit, entry.issues.map((issue) => `${issue.field} ${JSON.stringify(issue.value)}: ${issue.rule}`)])).toEqual([
      ['BAD', ['quantity 0: a number above 0']],
      ['HALF', ['component "": a code, not empty']],
    ]);
    expect(held).toEqual([]);
    // Deleted, then made again: its empty row (the deletion) and its new rows in one read. The rows win.
    const again = kitBatch({ records: [record(T1, 'AGAIN'), record(T2, 'AGAIN', 'LID', 2)], rejected: [] }, false);
    expect(Object.fromEntries(again.changes)).toEqual({ AGAIN: [row('AGAIN', 'LID', 2)] });
  });

  it('holds back the kits at the last cursor of a full batch (maybe cut), not those of a full batch of one cursor', () => {
    const batch = { records: [record(T1, 'GIFT', 'MUG', 2), record(T2, 'DUO', 'CAN', 1), record(T2, 'DUO', 'MUG', 0)], rejected: [] };
    const cut = kitBatch(batch, true);
    expect([...cut.changes.keys()], 'GIFT applied').toEqual(['GIFT']);
    expect(cut.held).toEqual(['DUO']);
    expect(cut.refused, 'the held kit\'s refusals wait for its whole read').toEqual([]);
    // Not full: DUO read whole, its bad row refused.
    expect(kitBatch(batch, false).held).toEqual([]);
    expect([...kitBatch(batch, false).changes.keys()]).toEqual(['GIFT', 'DUO']);
    // Full, every row at one cursor: the source raised its limit until it had the group whole.
    const tie = kitBatch({ records: [record(T2, 'DUO', 'CAN', 1), record(T2, 'TRIO', 'BOX', 1)], rejected: [] }, true);
    expect([...tie.changes.keys()]).toEqual(['DUO', 'TRIO']);
  });

  it('counts a row the source refused whole under the kit it named', () => {
    const { refused } = kitBatch({ records: [], rejected: [{ ref: 'bundles row cursor=x', issues: [{ record: 'LID', field: 'quantity', value: 'two', rule: 'number' }] }] }, false);
    expect(refused).toEqual([{ kit: 'LID', ref: 'bundles row cursor=x', issues: [{ record: 'LID', field: 'quantity', value: 'two', rule: 'number' }] }]);
  });
});

describe('applyKitChanges', () => {
  it('replaces the kits read whole and leaves every other kit, and another source\'s, as it was', async () => {
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 2), row('GIFT', 'BOX', 1), row('SIXPACK', 'CAN', 6), row('HAMPER', 'GIFT', 1)]);
    await writeComposition(redis, prefix, 'packs', [row('CRATE', 'CAN', 24)]);
    const write = await applyKitChanges(redis, prefix, 'bundles', new Map([['GIFT', [{ code: 'MUG', quantity: 4 }, { code: 'LID', quantity: 1 }]]]));
    // GIFT changed, and HAMPER through it.
    expect(write).toEqual({ kits: 1, changed: ['GIFT', 'HAMPER'], cycles: [], removed: [] });
    const catalog = redisKitCatalog(redis, prefix);
    expect(await catalog.explode('GIFT')).toEqual([{ code: 'LID', quantity: 1 }, { code: 'MUG', quantity: 4 }]);
    expect(await catalog.explode('HAMPER')).toEqual([{ code: 'LID', quantity: 1 }, { code: 'MUG', quantity: 4 }]);
    expect(await catalog.explode('SIXPACK'), 'a kit not read stays').toEqual([{ code: 'CAN', quantity: 6 }]);
    expect(await catalog.explode('CRATE'), 'another source\'s kit stays').toEqual([{ code: 'CAN', quantity: 24 }]);
    // The reverse index: BOX left GIFT and HAMPER; LID joined them.
    expect(await catalog.kitsContaining('BOX')).toEqual([]);
    expect([...(await catalog.kitsContaining('LID'))].sort()).toEqual(['GIFT', 'HAMPER']);
    expect([...(await redis.smembers(`${prefix}:state:kit:src:bundles`))].sort()).toEqual(['GIFT', 'HAMPER', 'SIXPACK']);
  });

  it('removes a kit without components, only when this source gave it, and writes nothing for kits read as stored', async () => {
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 2), row('SIXPACK', 'CAN', 6)]);
    await writeComposition(redis, prefix, 'packs', [row('CRATE', 'CAN', 24)]);
    const read = await redis.get(`${prefix}:state:kit:read:bundles`);
    const write = await applyKitChanges(redis, prefix, 'bundles', new Map([['SIXPACK', null], ['CRATE', null], ['GIFT', [{ code: 'MUG', quantity: 2 }]]]));
    expect(write, 'CRATE is packs\' kit: not removed by bundles').toEqual({ kits: 3, changed: ['SIXPACK'], cycles: [], removed: ['SIXPACK'] });
    const catalog = redisKitCatalog(redis, prefix);
    expect(await catalog.explode('SIXPACK')).toBeUndefined();
    expect(await catalog.explode('CRATE'), 'packs\' CRATE is not bundles\' to remove').toEqual([{ code: 'CAN', quantity: 24 }]);
    expect(await catalog.kitsContaining('CAN')).toEqual(['CRATE']);
    expect(await redis.smembers(`${prefix}:state:kit:src:bundles`)).toEqual(['GIFT']);
    expect(await redis.get(`${prefix}:state:kit:read:bundles`), 'a poll of changes is not a complete read').toBe(read);
    // Read again as stored (the overlap): no transaction at all.
    const before = await redis.get(`${prefix}:state:kit:direct:GIFT`);
    await redis.set(`${prefix}:state:kit:direct:GIFT`, before!.replace('"quantity":2', '"quantity":2.0'));
    expect(await applyKitChanges(redis, prefix, 'bundles', new Map([['GIFT', [{ code: 'MUG', quantity: 2 }]], ['SIXPACK', null]]))).toEqual({ kits: 2, changed: [], cycles: [], removed: [] });
    expect(await redis.get(`${prefix}:state:kit:direct:GIFT`), 'untouched: nothing was written').toBe(before!.replace('"quantity":2', '"quantity":2.0'));
  });

  it('takes a kit another source stored with the same components: it is this source\'s now, and stays when the other drops it', async () => {
    await writeComposition(redis, prefix, 'packs', [row('CRATE', 'CAN', 24)]);
    // bundles' feed reads CRATE with the very components packs gave it: not "stored as read" (packs' entry).
    await applyKitChanges(redis, prefix, 'bundles', new Map([['CRATE', [{ code: 'CAN', quantity: 24 }]]]));
    const catalog = redisKitCatalog(redis, prefix);
    expect(await catalog.direct('CRATE')).toEqual({ source: 'bundles', components: [{ code: 'CAN', quantity: 24 }] });
    expect(await redis.smembers(`${prefix}:state:kit:src:bundles`)).toEqual(['CRATE']);
    // packs read whole without CRATE: bundles still gives it, so it stays a kit.
    await writeComposition(redis, prefix, 'packs', []);
    expect(await catalog.explode('CRATE')).toEqual([{ code: 'CAN', quantity: 24 }]);
    expect(await catalog.kitsContaining('CAN')).toEqual(['CRATE']);
  });

  it('replaces the refusals of the kits read, keeping the others\'', async () => {
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 2), row('PAIR', 'BOX', 2)], [
      { kit: 'GIFT', ref: 'r1', issues: [{ record: 'r1', field: 'quantity', value: 0, rule: 'a number above 0' }] },
      { kit: 'PAIR', ref: 'r2', issues: [{ record: 'r2', field: 'quantity', value: -1, rule: 'a number above 0' }] },
    ]);
    await applyKitChanges(redis, prefix, 'bundles', new Map([['GIFT', [{ code: 'MUG', quantity: 2 }]]]), [{ kit: 'LID', ref: 'r3', issues: [{ record: 'r3', field: 'component', value: '', rule: 'a code, not empty' }] }]);
    const refused = await redisKitCatalog(redis, prefix).refused('bundles');
    expect([...refused.keys()].sort(), 'GIFT read without bad rows: its refusal goes; PAIR not read: kept').toEqual(['LID', 'PAIR']);
    // PAIR read again exactly as stored, its bad row fixed: nothing to rewrite but its refusal, which goes.
    await applyKitChanges(redis, prefix, 'bundles', new Map([['PAIR', [{ code: 'BOX', quantity: 2 }]]]));
    expect([...(await redisKitCatalog(redis, prefix).refused('bundles')).keys()]).toEqual(['LID']);
  });
});
