import { describe, expect, it } from 'vitest';

import { validateInventoryUpdate } from '../../src/store/validation.js';

function rulesBroken(item: unknown): Array<[string, string]> {
  return validateInventoryUpdate(item).map((issue) => [issue.field, issue.rule]);
}

describe('validateInventoryUpdate', () => {
  it('accepts a minimal item and a full valid one', () => {
    expect(validateInventoryUpdate({ InternalId: 0, Code: 'A-1' })).toEqual([]);
    expect(
      validateInventoryUpdate({
        InternalId: 0,
        Code: 'A-1',
        Stock: 0,
        Price: 999999.99,
        OfferPrice: 0.01,
        Taxes: 21,
        ForSale: true,
        Published: false,
        IsItem: true,
        ParentItemId: null,
        ParentItemCode: null,
        PriceListId: 1,
        PriceListCode: null,
        PriceMode: null,
        PrecioOriginal: '10.50',
        DepStock: 'DEP-1',
        Properties: [{ Key: 'color', Value: 'rojo' }],
        Name: 'Camión',
        Code2: 'X',
        ExternalReference: 'ERP-1',
        SiteId: 2,
        ExtendedWarranty: [{ Name: '1 year', Price: 10, Active: true, Cant: 3, Code: 'W1' }],
      }),
    ).toEqual([]);
  });

  it('names the record (Code), field, value and rule of each violation', () => {
    expect(validateInventoryUpdate({ Code: 'A-1', Stock: -1 })).toEqual([
      { record: 'A-1', field: 'Stock', value: -1, rule: 'integer 0 to 999999' },
    ]);
    expect(validateInventoryUpdate({ Code: 'A-1', Stock: 5 }, 'row 7')[0]).toBeUndefined();
    expect(validateInventoryUpdate({ Code: 'A-1', Stock: 1.5 }, 'row 7')[0]?.record).toBe('row 7');
  });

  it('requires a non-empty string Code', () => {
    expect(rulesBroken({ Stock: 1 })).toEqual([['Code', 'required non-empty string']]);
    expect(rulesBroken({ Code: '  ' })).toEqual([['Code', 'required non-empty string']]);
    expect(rulesBroken({ Code: 12 })).toEqual([['Code', 'required non-empty string']]);
  });

  it('refuses stock outside 0–999999, fractional or not a number', () => {
    for (const stock of [-1, 1_000_000, 2.5, '5', null, Number.NaN]) {
      expect(rulesBroken({ Code: 'A', Stock: stock })).toEqual([['Stock', 'integer 0 to 999999']]);
    }
    expect(rulesBroken({ Code: 'A', Stock: 999999 })).toEqual([]);
  });

  it('refuses prices outside 0.01–999999.99 or with more than 2 decimals', () => {
    const rule = 'number 0.01 to 999999.99 with at most 2 decimals';
    for (const price of [0, 1_000_000, 10.001, Number.POSITIVE_INFINITY, '10']) {
      expect(rulesBroken({ Code: 'A', Price: price })).toEqual([['Price', rule]]);
      expect(rulesBroken({ Code: 'A', OfferPrice: price })).toEqual([['OfferPrice', rule]]);
    }
    expect(rulesBroken({ Code: 'A', Price: 0.07, OfferPrice: 1234.56 })).toEqual([]);
  });

  it('checks Taxes, booleans, PriceMode, ids and string fields', () => {
    expect(rulesBroken({ Code: 'A', Taxes: 100.5 })).toEqual([['Taxes', 'percentage 0 to 100']]);
    expect(rulesBroken({ Code: 'A', ForSale: 'true', Published: 1, IsItem: null })).toEqual([
      ['ForSale', 'true or false'],
      ['Published', 'true or false'],
      ['IsItem', 'true or false'],
    ]);
    expect(rulesBroken({ Code: 'A', PriceMode: 1 })).toEqual([['PriceMode', '0 or null']]);
    expect(rulesBroken({ Code: 'A', PriceMode: 0 })).toEqual([]);
    expect(rulesBroken({ Code: 'A', SiteId: 0, PriceListId: 1.5 })).toEqual([
      ['PriceListId', 'positive integer'],
      ['SiteId', 'positive integer'],
    ]);
    expect(rulesBroken({ Code: 'A', DepStock: 3, PrecioOriginal: 10.5 })).toEqual([
      ['PrecioOriginal', 'a decimal written as text, such as "1234.50"'],
      ['DepStock', 'string'],
    ]);
  });

  it('takes PrecioOriginal only as a decimal written as text', () => {
    for (const bad of ['10,50', '1.234,50', 'abc', '', '-3', '10.']) {
      expect(rulesBroken({ Code: 'A', PrecioOriginal: bad })).toEqual([['PrecioOriginal', 'a decimal written as text, such as "1234.50"']]);
    }
    expect(rulesBroken({ Code: 'A', PrecioOriginal: '1234' })).toEqual([]);
    expect(rulesBroken({ Code: 'A', PrecioOriginal: '1234.5' })).toEqual([]);
  });

  it('refuses a Code with spaces around it instead of sending it untrimmed (it is the item key)', () => {
    expect(rulesBroken({ Code: ' SKU-1' })).toEqual([['Code', 'no spaces before or after (the Code is the key of the item)']]);
    expect(rulesBroken({ Code: 'SKU-1\t' })).toEqual([['Code', 'no spaces before or after (the Code is the key of the item)']]);
    expect(rulesBroken({ Code: 'SKU 1' })).toEqual([]);
  });

  it('refuses an InternalId other than 0 and fields the spec does not have', () => {
    expect(rulesBroken({ Code: 'A', InternalId: 7 })).toEqual([['InternalId', 'always 0']]);
    expect(rulesBroken({ Code: 'A', stock: 3 })).toEqual([['stock', 'not a field of the inventory item']]);
  });

  it('reports every violation at once', () => {
    expect(validateInventoryUpdate({ Code: 'A', Stock: -1, Price: 0, Published: 'yes' })).toHaveLength(3);
  });

  it('reports a value that is not an object', () => {
    expect(validateInventoryUpdate('A-1')).toHaveLength(1);
  });
});
