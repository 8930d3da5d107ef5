import { describe, expect, it } from 'vitest';

import {
  INVENTORY_ITEM_AS_SENT,
  INVENTORY_UPDATE_PLAIN,
  inventoryItemSchema,
  inventoryUpdateSchema,
  isInventoryItemAsSent,
  isPlainInventoryUpdate,
} from '../../../src/store/schemas/index.js';

/** An item as the store sends it, every documented field of its own type. */
const item = {
  InternalId: 6,
  Code: 'SKU-000006',
  Stock: 4,
  Price: 155894.75,
  OfferPrice: 166807.38,
  Taxes: 10.5,
  ForSale: true,
  Published: true,
  IsItem: false,
  ParentItemId: 5,
  ParentItemCode: 'SKU-000005',
  PriceListId: 1,
  PriceListCode: 'MINORISTA',
  PriceMode: 0,
  PrecioOriginal: '166807.38',
  DepStock: 'DEP-CENTRAL',
  Properties: [{ Key: 'Color', Value: 'Azul marino' }, { Key: 'Talle', Value: null }],
  Name: 'Dulce de leche - Azul marino 400 g',
  Code2: '7797321838546',
  ExternalReference: 'ERP-0000006',
  SiteId: 1,
  ExtendedWarranty: [],
  ChannelData: { anything: ['kept'] },
};

/** Values of every kind a tolerant store may send, for any field. */
const values: unknown[] = [
  undefined,
  null,
  0,
  -0,
  7,
  -3,
  12.5,
  2 ** 53,
  1e300,
  '',
  '  ',
  '12',
  '12.50',
  '12,50',
  'abc',
  ' SKU-1 ',
  true,
  false,
  'true',
  '1',
  1,
  {},
  { Name: 'IVA', Value: 21 },
  [],
  [1, 2],
  [{ Key: 'k', Value: 'v' }],
  [{ Key: 'k', Value: null }],
  [{ Key: 'k' }],
  [{ Key: 1, Value: 'v' }],
  [{ Key: 'k', Value: 2 }],
  [null],
  [[]],
];

describe('isInventoryItemAsSent', () => {
  it('has one check per field of the item schema', () => {
    expect(Object.keys(INVENTORY_ITEM_AS_SENT).sort()).toEqual(Object.keys(inventoryItemSchema.shape).sort());
  });

  it('takes an item of the store\'s own types, as the schema reads it', () => {
    expect(isInventoryItemAsSent(item)).toBe(true);
    expect(inventoryItemSchema.parse(item)).toEqual(item);
  });

  it('takes a value only where the schema would take it unchanged, for every field and every kind of value', () => {
    const taken: string[] = [];
    for (const field of Object.keys(inventoryItemSchema.shape)) {
      for (const value of values) {
        const variant: Record<string, unknown> = { ...item, [field]: value };
        if (value === undefined) delete variant[field];
        if (!isInventoryItemAsSent(variant)) continue;
        taken.push(`${field}=${JSON.stringify(value)}`);
        const parsed = inventoryItemSchema.safeParse(variant);
        expect(parsed.success, `${field} = ${JSON.stringify(value)}`).toBe(true);
        expect(parsed.data, `${field} = ${JSON.stringify(value)}`).toEqual(variant);
      }
    }
    // The check is not vacuous: plain values pass, text standing for numbers and booleans does not.
    expect(taken).toEqual(expect.arrayContaining(['Stock=7', 'Stock=12.5', 'Stock=null', 'ForSale=false', 'Name="abc"', 'Properties=[]']));
    expect(taken).not.toContain('Stock="12"');
    expect(taken).not.toContain('ForSale="true"');
    expect(taken).not.toContain('Code=""');
    expect(taken).not.toContain('InternalId=9007199254740992');
  });

  it('leaves what is not an object to the schema', () => {
    for (const raw of [null, 1, 'SKU-1', [item]]) expect(isInventoryItemAsSent(raw)).toBe(false);
  });
});

describe('isPlainInventoryUpdate', () => {
  const numbers = [0, -0, 1, -1, 0.005, 0.01, 0.1 + 0.2, 10.001, 10.5, 99.99, 100, 100.01, 999999, 999999.99, 1000000, 2 ** 53, Number.NaN, Infinity, -Infinity];
  const others = [undefined, null, '', ' ', 'SKU-1', ' SKU-1', 'SKU-1 ', '12', true, false, {}, []];

  it('takes an update only where the schema takes it, for every field it knows and every kind of value', () => {
    const taken: string[] = [];
    for (const field of Object.keys(INVENTORY_UPDATE_PLAIN)) {
      for (const value of [...numbers, ...others]) {
        const update = field === 'Code' ? { Code: value } : { Code: 'SKU-1', [field]: value };
        if (!isPlainInventoryUpdate(update)) continue;
        taken.push(`${field}=${String(value)}`);
        expect(inventoryUpdateSchema.safeParse(update).success, `${field} = ${String(value)}`).toBe(true);
      }
    }
    expect(taken).toEqual(expect.arrayContaining(['Code=SKU-1', 'Stock=0', 'Stock=999999', 'Price=0.01', 'Price=999999.99', 'Taxes=100', 'IsItem=false', 'InternalId=0']));
    for (const refused of ['Stock=-1', 'Stock=1000000', 'Price=10.001', 'Price=0', 'Taxes=100.01', 'Code= SKU-1', 'Price=NaN']) expect(taken).not.toContain(refused);
  });

  it('leaves an update with another field, without Code, or not an object to the schema', () => {
    expect(isPlainInventoryUpdate({ Code: 'SKU-1', Stock: 1, Name: 'x' })).toBe(false);
    expect(isPlainInventoryUpdate({ Stock: 1 })).toBe(false);
    for (const raw of [null, 'SKU-1', [{ Code: 'SKU-1' }]]) expect(isPlainInventoryUpdate(raw)).toBe(false);
  });
});
