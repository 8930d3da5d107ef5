/**
 * What a kit sale reserves and how it is exported as components (issue 26), against a hand-written
 * catalog: a gift set of two mugs and a box, a breakfast kit sharing the mug, a six-pack, a kilo of
 * flour sold by the half kilo, and a cycle. Every expectation is worked out by hand in the test.
 */
import { describe, expect, it } from 'vitest';

import { saleItemRows } from '../../../../../src/erp/sinks/sale-rows.js';
import { type Sale, saleSchema } from '../../../../../src/store/schemas/index.js';
import type { KitComponent, KitCycle } from '../../../../../src/sync/inventory/listing/kits/index.js';
import { componentSale, componentUnits, type KitExploder, reservedLines, soldLines } from '../../../../../src/sync/inventory/listing/kits/sale-lines.js';

const COMPOSITIONS: Record<string, readonly KitComponent[] | KitCycle> = {
  GIFT: [
    { code: 'MUG', quantity: 2 },
    { code: 'BOX', quantity: 1 },
  ],
  BREAKFAST: [
    { code: 'MUG', quantity: 1 },
    { code: 'COFFEE', quantity: 1 },
  ],
  SIXPACK: [{ code: 'CAN', quantity: 6 }],
  HALFKILO: [{ code: 'FLOUR', quantity: 0.5 }],
  'ROPE-KIT': [{ code: 'ROPE', quantity: 1.1 }],
  LOOP: { cycle: ['LOOP', 'INNER', 'LOOP'] },
};

/** The catalog the tests read, and the codes of each call. */
function catalog(): KitExploder & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    asked,
    explodeMany(codes) {
      asked.push([...codes]);
      return Promise.resolve(new Map(codes.flatMap((code) => (COMPOSITIONS[code] ? [[code, COMPOSITIONS[code]] as const] : []))));
    },
  };
}

function sale(items: Array<Record<string, unknown>>): Sale {
  return saleSchema.parse({ Id: 7, Status: 1, Total: 100, Items: items.map((item, i) => ({ Id: 100 + i, SaleId: 7, ...item })) });
}

async function reserved(items: Array<Record<string, unknown>>): Promise<Record<string, number>> {
  return Object.fromEntries((await reservedLines(soldLines(sale(items)), catalog())).lines);
}

describe('kit sale reservations', () => {
  it('reserves a plain line under its own code, summed over its lines, and skips lines without a code or a quantity', async () => {
    expect(await reserved([{ Code: 'MUG', Quantity: 2 }, { Code: ' MUG ', Quantity: 1 }, { Code: '', Quantity: 4 }, { Code: 'BOX', Quantity: 0 }])).toEqual({ MUG: 3 });
  });

  it('reserves a kit line as its components, quantity × units, and the kit\'s own code with its units', async () => {
    expect(await reserved([{ Code: 'GIFT', Quantity: 3, IsCombo: true }])).toEqual({ GIFT: 3, MUG: 6, BOX: 3 });
  });

  it('explodes a code that is a kit even when the store does not mark the line IsCombo', async () => {
    expect(await reserved([{ Code: 'GIFT', Quantity: 1, IsCombo: false }])).toEqual({ GIFT: 1, MUG: 2, BOX: 1 });
  });

  it('adds up a component sold alone and inside two kits in one sale', async () => {
    const lines = [
      { Code: 'MUG', Quantity: 1 },
      { Code: 'GIFT', Quantity: 2, IsCombo: true },
      { Code: 'BREAKFAST', Quantity: 1, IsCombo: true },
    ];
    // MUG: 1 alone + 2 × 2 in the gift sets + 1 × 1 in the breakfast kit.
    expect(await reserved(lines)).toEqual({ MUG: 6, GIFT: 2, BOX: 2, BREAKFAST: 1, COFFEE: 1 });
  });

  it('reserves a pack as its one component times the pack size', async () => {
    expect(await reserved([{ Code: 'SIXPACK', Quantity: 2 }])).toEqual({ SIXPACK: 2, CAN: 12 });
  });

  it('rounds a decimal component up over the kit\'s units in the sale (ceil, not floor, not per line)', async () => {
    // 3 half kilos hold 1.5 kg: 2 whole units are reserved (floor would give 1, the product 1.5).
    expect(await reserved([{ Code: 'HALFKILO', Quantity: 3 }])).toEqual({ HALFKILO: 3, FLOUR: 2 });
    // Two lines of one half kilo each: 1 kg, one unit (per line would reserve 2).
    expect(await reserved([{ Code: 'HALFKILO', Quantity: 1 }, { Code: 'HALFKILO', Quantity: 1 }])).toEqual({ HALFKILO: 2, FLOUR: 1 });
    // 1.1 × 50 is 55 exactly, not 55.00000000000001 rounded up to 56.
    expect(await reserved([{ Code: 'ROPE-KIT', Quantity: 50 }])).toEqual({ 'ROPE-KIT': 50, ROPE: 55 });
    expect(componentUnits(1.1, 51)).toBe(57);
  });

  it('reserves a combo line without a composition, and a kit in a cycle, under its own code and says why', async () => {
    const result = await reservedLines(soldLines(sale([{ Code: 'MYSTERY', Quantity: 2, IsCombo: true }, { Code: 'LOOP', Quantity: 1 }, { Code: 'BOX', Quantity: 1 }])), catalog());
    expect(Object.fromEntries(result.lines)).toEqual({ MYSTERY: 2, LOOP: 1, BOX: 1 });
    expect(result.unresolved).toEqual([
      { code: 'MYSTERY', reason: 'the store marks it a combo, but no kit source composes it' },
      { code: 'LOOP', reason: 'its composition is a cycle (LOOP → INNER → LOOP)' },
    ]);
  });

  it('asks the catalog once per code of a sale, in one call', async () => {
    const kits = catalog();
    await reservedLines(soldLines(sale([{ Code: 'GIFT', Quantity: 1 }, { Code: 'GIFT', Quantity: 1 }, { Code: 'MUG', Quantity: 1 }])), kits);
    expect(kits.asked).toEqual([['GIFT', 'MUG']]);
  });
});

describe('kit sale exported as components', () => {
  it('replaces each kit line where it stands by its components, quantities multiplied, naming the kit line', async () => {
    const original = sale([
      { Code: 'MUG', Quantity: 1, Price: 10, Name: 'Mug' },
      { Code: 'GIFT', Quantity: 3, Price: 25, Name: 'Gift set', IsCombo: true, Currency: { Code: 'ARS' } },
      { Code: 'SIXPACK', Quantity: 2, Price: 12 },
    ]);
    const { sale: exported, exploded } = await componentSale(original, catalog());
    expect(exploded).toBe(2);
    expect(exported.Items).toEqual([
      original.Items![0],
      { Id: 101, SaleId: 7, Currency: { Code: 'ARS' }, Code: 'MUG', Quantity: 6, IsItem: true, SaleItemType: 0, IsCombo: false, KitCode: 'GIFT', KitQuantity: 3 },
      { Id: 101, SaleId: 7, Currency: { Code: 'ARS' }, Code: 'BOX', Quantity: 3, IsItem: true, SaleItemType: 0, IsCombo: false, KitCode: 'GIFT', KitQuantity: 3 },
      { Id: 102, SaleId: 7, Code: 'CAN', Quantity: 12, IsItem: true, SaleItemType: 0, IsCombo: false, KitCode: 'SIXPACK', KitQuantity: 2 },
    ]);
    // The rest of the sale is the store's: one sale, its total untouched.
    expect({ ...exported, Items: undefined }).toEqual({ ...original, Items: undefined });
    // The interface table gets one numbered row per line, component rows without a price of their own.
    expect(saleItemRows(exported, 1).map((row) => [row.line, row.code, row.quantity, row.unit_price, row.is_combo])).toEqual([
      [1, 'MUG', 1, 10, null],
      [2, 'MUG', 6, null, false],
      [3, 'BOX', 3, null, false],
      [4, 'CAN', 12, null, false],
    ]);
  });

  it('exports a decimal component exactly (the ERP books 1.5 kg), where the reservation holds 2 units', async () => {
    const { sale: exported } = await componentSale(sale([{ Code: 'HALFKILO', Quantity: 3 }]), catalog());
    expect(exported.Items?.map((item) => [item.Code, item.Quantity])).toEqual([['FLOUR', 1.5]]);
  });

  it('keeps a sale without kit lines as it is, and a kit line it cannot explode as sold', async () => {
    const plain = sale([{ Code: 'MUG', Quantity: 1 }]);
    expect((await componentSale(plain, catalog())).sale).toBe(plain);
    const odd = sale([{ Code: 'LOOP', Quantity: 1 }, { Code: 'MYSTERY', Quantity: 1, IsCombo: true }]);
    const result = await componentSale(odd, catalog());
    expect(result.sale.Items).toEqual(odd.Items);
    expect(result.unresolved.map((kit) => kit.code)).toEqual(['LOOP', 'MYSTERY']);
  });
});
