import { describe, expect, it } from 'vitest';

import {
  bool,
  int,
  looseBool,
  looseInt,
  looseNumber,
  looseString,
  num,
  numberFromText,
  numberOrObject,
  READ_RULES,
  str,
  stringOrObject,
} from '../../../src/store/schemas/fields.js';
import { inventoryItemSchema, inventoryUpdateSchema, saleSchema, saleUpdateSchema } from '../../../src/store/schemas/index.js';

function failure(schema: { safeParse(value: unknown): { success: boolean; error?: { issues: Array<{ message: string }> } } }, value: unknown) {
  const parsed = schema.safeParse(value);
  expect(parsed.success).toBe(false);
  return parsed.error!.issues[0]!.message;
}

describe('looseNumber', () => {
  it.each([
    [12.5, 12.5],
    ['12.50', 12.5],
    ['12,50', 12.5],
    [' -3,25 ', -3.25],
    ['7', 7],
    ['.5', 0.5],
    ['0', 0],
  ])('reads %j as %j', (input, expected) => {
    expect(looseNumber.parse(input)).toBe(expected);
  });

  it.each(['', 'abc', '1.234,56', '1,2,3', '0x1A', 'Infinity', '1e3', 'NaN'])('refuses %j, naming the rule', (input) => {
    expect(failure(looseNumber, input)).toBe(READ_RULES.number);
  });

  it('refuses booleans and objects', () => {
    expect(failure(looseNumber, true)).toBe(READ_RULES.number);
    expect(failure(looseNumber, { Value: 1 })).toBe(READ_RULES.number);
  });

  it('numberFromText reads a decimal comma and leaves ambiguous text unread', () => {
    expect(numberFromText('1234,5')).toBe(1234.5);
    expect(numberFromText('1.234,56')).toBeUndefined();
  });
});

describe('looseInt', () => {
  it('reads integers and integers written as text', () => {
    expect(looseInt.parse(12)).toBe(12);
    expect(looseInt.parse('12')).toBe(12);
    expect(looseInt.parse('12.0')).toBe(12);
  });

  it('refuses a fraction, naming the rule', () => {
    expect(failure(looseInt, '12,5')).toBe(READ_RULES.integer);
    expect(failure(looseInt, 1.5)).toBe(READ_RULES.integer);
  });
});

describe('looseBool', () => {
  it.each([
    [true, true],
    [false, false],
    [1, true],
    [0, false],
    ['true', true],
    ['FALSE', false],
    ['1', true],
    ['0', false],
  ])('reads %j as %j', (input, expected) => {
    expect(looseBool.parse(input)).toBe(expected);
  });

  it.each([2, 'yes', '', 'si'])('refuses %j, naming the rule', (input) => {
    expect(failure(looseBool, input)).toBe(READ_RULES.boolean);
  });
});

describe('looseString', () => {
  it('reads a number as its text (a postal code sent as a number)', () => {
    expect(looseString.parse(1425)).toBe('1425');
    expect(looseString.parse('B1425')).toBe('B1425');
  });

  it('refuses objects and booleans', () => {
    expect(failure(looseString, { a: 1 })).toBe(READ_RULES.string);
    expect(failure(looseString, true)).toBe(READ_RULES.string);
  });
});

describe('optional fields', () => {
  it('accept null and absence', () => {
    for (const schema of [num, int, bool, str, numberOrObject, stringOrObject]) {
      expect(schema.parse(null)).toBeNull();
      expect(schema.parse(undefined)).toBeUndefined();
    }
  });
});

describe('numberOrObject and stringOrObject (typed "null or object" by the spec)', () => {
  it('read a number or numeric text as a number and keep objects and arrays as sent', () => {
    expect(numberOrObject.parse('21,00')).toBe(21);
    expect(numberOrObject.parse({ Name: 'IVA', Value: 21 })).toEqual({ Name: 'IVA', Value: 21 });
    expect(numberOrObject.parse([{ Value: 21 }])).toEqual([{ Value: 21 }]);
    expect(stringOrObject.parse('DEP1')).toBe('DEP1');
    expect(stringOrObject.parse({ Code: 'DEP1' })).toEqual({ Code: 'DEP1' });
  });

  it('refuse a word where a number is expected', () => {
    expect(failure(numberOrObject, 'veintiuno')).toBe(READ_RULES.numberOrObject);
  });
});

describe('record schemas', () => {
  it('read an inventory item in loose types and keep unknown fields', () => {
    const item = inventoryItemSchema.parse({
      Code: 'A-1',
      Stock: '12',
      Price: '1234,50',
      OfferPrice: null,
      Taxes: [{ Name: 'IVA', Value: 21 }],
      DepStock: { Code: 'DEP1' },
      ForSale: 1,
      Published: 'true',
      IsItem: '1',
      SiteId: '2',
      ChannelData: { Origin: 'erp' },
    });
    expect(item).toMatchObject({ Code: 'A-1', Stock: 12, Price: 1234.5, OfferPrice: null, ForSale: true, Published: true, IsItem: true, SiteId: 2 });
    expect(item.ChannelData).toEqual({ Origin: 'erp' });
  });

  it('read a sale with its Id as text and nested loose types', () => {
    const sale = saleSchema.parse({ Id: '42', Total: '99,90', Status: '1', UserData: { Access: 0, PostalCode: 1425 }, Items: [{ Quantity: '2', IsItem: 'false' }] });
    expect(sale).toMatchObject({ Id: 42, Total: 99.9, Status: 1, UserData: { Access: false, PostalCode: '1425' }, Items: [{ Quantity: 2, IsItem: false }] });
  });

  it('stay strict on output: the update bodies refuse loose types', () => {
    expect(inventoryUpdateSchema.safeParse({ Code: 'A-1', Stock: '12' }).success).toBe(false);
    expect(inventoryUpdateSchema.safeParse({ Code: 'A-1', ForSale: 1 }).success).toBe(false);
    expect(inventoryUpdateSchema.safeParse({ Code: 'A-1', Taxes: { Value: 21 } }).success).toBe(false);
    expect(saleUpdateSchema.safeParse({ Status: '2' }).success).toBe(false);
  });
});
