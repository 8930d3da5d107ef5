import { randomUUID } from 'node:crypto';

import { afterAll, beforeEach, describe, expect, it } from 'vitest';

import { createRedis } from '../../../../../src/queue/connection.js';
import { checkKitRow, kitFigure, type KitRow, redisKitCatalog, writeComposition } from '../../../../../src/sync/inventory/listing/kits/index.js';
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
const sorted = (codes: readonly string[]): string[] => [...codes].sort();

describe('the kit catalog', () => {
  it('explodes a pack, a kit and a nested kit into leaf components with multiplied quantities', async () => {
    await writeComposition(redis, prefix, 'bundles', [
      row('SIXPACK', 'CAN', 6),
      row('GIFT', 'MUG', 2),
      row('GIFT', 'BOX', 1),
      // Two gift sets and half a kilo of coffee: MUG 2 × 2 = 4, BOX 2, COFFEE 0.5.
      row('HAMPER', 'GIFT', 2),
      row('HAMPER', 'COFFEE', 0.5),
    ]);
    const catalog = redisKitCatalog(redis, prefix);
    expect(await catalog.explode('SIXPACK')).toEqual([{ code: 'CAN', quantity: 6 }]);
    expect(await catalog.explode('HAMPER')).toEqual(expect.arrayContaining([{ code: 'MUG', quantity: 4 }, { code: 'BOX', quantity: 2 }, { code: 'COFFEE', quantity: 0.5 }]));
    expect(await catalog.explode('HAMPER')).toHaveLength(3);
    expect(await catalog.explode('MUG'), 'a component is not a kit').toBeUndefined();
  });

  it('adds up a component a kit names in two rows, and one reached by two paths', async () => {
    // GIFT names MUG twice: 1 + 2 = 3 mugs (the last row alone: 2). HAMPER: 1 MUG + 2 GIFT = 1 + 2 × 3 = 7 mugs, 2 boxes.
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 1), row('GIFT', 'BOX', 1), row('GIFT', 'MUG', 2), row('HAMPER', 'MUG', 1), row('HAMPER', 'GIFT', 2)]);
    const catalog = redisKitCatalog(redis, prefix);
    expect(await catalog.explode('GIFT')).toEqual([{ code: 'BOX', quantity: 1 }, { code: 'MUG', quantity: 3 }]);
    expect(await catalog.explode('HAMPER')).toEqual([{ code: 'BOX', quantity: 2 }, { code: 'MUG', quantity: 7 }]);
  });

  it('finds every kit containing a component, directly or through another kit, and only those', async () => {
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 2), row('GIFT', 'BOX', 1), row('BREAKFAST', 'MUG', 1), row('BREAKFAST', 'BOWL', 1), row('HAMPER', 'GIFT', 1), row('SIXPACK', 'CAN', 6)]);
    const catalog = redisKitCatalog(redis, prefix);
    expect(sorted(await catalog.kitsContaining('MUG'))).toEqual(['BREAKFAST', 'GIFT', 'HAMPER']);
    expect(sorted(await catalog.kitsContaining('BOX'))).toEqual(['GIFT', 'HAMPER']);
    expect(await catalog.kitsContaining('CAN')).toEqual(['SIXPACK']);
    expect(await catalog.kitsContaining('PLATE')).toEqual([]);
  });

  it('refuses a cycle, naming it, and resolves the kits outside it', async () => {
    const write = await writeComposition(redis, prefix, 'bundles', [row('A', 'B', 1), row('B', 'A', 1), row('B', 'MUG', 1), row('C', 'MUG', 3)]);
    const catalog = redisKitCatalog(redis, prefix);
    expect(write.cycles).toEqual([['A', 'B']]);
    expect(await catalog.explode('A')).toEqual({ cycle: ['A', 'B'] });
    expect(await catalog.explode('B')).toEqual({ cycle: ['A', 'B'] });
    expect(await catalog.explode('C')).toEqual([{ code: 'MUG', quantity: 3 }]);
    expect(await catalog.kitsContaining('MUG'), 'a kit in a cycle is not indexed (it is never written)').toEqual(['C']);
  });

  it('replaces a source\'s compositions on its next read: a kit dropped, a quantity changed, the reverse index following', async () => {
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 2), row('GIFT', 'BOX', 1), row('SIXPACK', 'CAN', 6)]);
    const second = await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 3), row('GIFT', 'BOX', 1)]);
    const catalog = redisKitCatalog(redis, prefix);
    expect(second.changed).toEqual(['GIFT', 'SIXPACK']);
    expect(await catalog.explode('SIXPACK')).toBeUndefined();
    expect(await catalog.kitsContaining('CAN')).toEqual([]);
    const unchanged = await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'BOX', 1), row('GIFT', 'MUG', 3)]);
    expect(unchanged.changed, 'the same composition read again changes nothing').toEqual([]);
  });

  it('keeps the kits of other sources when one source is read again', async () => {
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 2)]);
    await writeComposition(redis, prefix, 'packs', [row('SIXPACK', 'CAN', 6)]);
    await writeComposition(redis, prefix, 'bundles', [row('GIFT', 'MUG', 1)]);
    const catalog = redisKitCatalog(redis, prefix);
    expect(await catalog.explode('SIXPACK')).toEqual([{ code: 'CAN', quantity: 6 }]);
    expect(await catalog.explode('GIFT')).toEqual([{ code: 'MUG', quantity: 1 }]);
  });
});

describe('checkKitRow', () => {
  it.each([
    [{ kit: 'GIFT', component: 'MUG', quantity: 0 }, 'quantity', 'a number above 0'],
    [{ kit: 'GIFT', component: 'MUG', quantity: -1 }, 'quantity', 'a number above 0'],
    [{ kit: 'GIFT', component: 'MUG' }, 'quantity', 'a number above 0'],
    [{ kit: '', component: 'MUG', quantity: 1 }, 'kit', 'a code, not empty'],
    [{ kit: 'GIFT', component: ' ', quantity: 1 }, 'component', 'a code, not empty'],
  ])('refuses %j naming its field and rule', (fields, field, rule) => {
    expect(checkKitRow(fields, 'row 3')).toEqual([expect.objectContaining({ record: 'row 3', field, rule })]);
  });

  it('takes a decimal quantity', () => {
    expect(checkKitRow({ kit: 'BAG', component: 'FLOUR', quantity: 0.5 }, 'row 1')).toEqual({ kit: 'BAG', component: 'FLOUR', quantity: 0.5 });
  });
});

describe('kitFigure', () => {
  it('names the first component (by code) of the lowest as the one limiting the kit when two tie', () => {
    // BOX: floor(3 ÷ 1) = 3 kits, MUG: floor(7 ÷ 2) = 3 kits, TAG: floor(9 ÷ 2) = 4 kits. BOX and MUG tie at 3: BOX comes first.
    const sellable = new Map([['BOX', 3], ['MUG', 7], ['TAG', 9]]);
    const { figure, limiting } = kitFigure([{ code: 'BOX', quantity: 1 }, { code: 'MUG', quantity: 2 }, { code: 'TAG', quantity: 2 }], (code) => sellable.get(code));
    expect({ figure, limiting }).toEqual({ figure: 3, limiting: 'BOX' });
  });
});
