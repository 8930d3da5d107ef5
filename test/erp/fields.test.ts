import { describe, expect, it } from 'vitest';

import { FULFILLMENT_FIELDS, INVENTORY_FIELDS, normalizeRecord, unknownMappingTargets } from '../../src/erp/fields.js';

const ref = 'test row 1';

function fieldsOf(raw: Record<string, unknown>, options: { mapping?: Record<string, string>; decimalComma?: boolean } = {}) {
  const result = normalizeRecord(raw, INVENTORY_FIELDS, { ref, ...options });
  if (!('fields' in result)) throw new Error(`unexpected issues: ${JSON.stringify(result.issues)}`);
  return result.fields;
}

function issuesOf(raw: Record<string, unknown>, options: { decimalComma?: boolean } = {}) {
  const result = normalizeRecord(raw, INVENTORY_FIELDS, { ref, ...options });
  if (!('issues' in result)) throw new Error(`expected issues, got ${JSON.stringify(result.fields)}`);
  return result.issues;
}

describe('normalizeRecord coercion', () => {
  it('reads numeric strings as numbers, as pg numeric and mysql DECIMAL deliver them', () => {
    expect(fieldsOf({ Code: 'A', Price: '12.50', Stock: ' 7 ', Taxes: '21.00', OfferPrice: 15 })).toEqual({
      Code: 'A',
      Price: 12.5,
      Stock: 7,
      Taxes: 21,
      OfferPrice: 15,
    });
  });

  it('reads decimal commas with dot thousands when decimalComma is on', () => {
    expect(fieldsOf({ Code: 'A', Price: '1.234,56', OfferPrice: '0,99', Stock: '1.200' }, { decimalComma: true })).toEqual({
      Code: 'A',
      Price: 1234.56,
      OfferPrice: 0.99,
      Stock: 1200,
    });
  });

  it('rejects a comma number when decimalComma is off, and a dot decimal when it is on', () => {
    expect(issuesOf({ Code: 'A', Price: '12,50' })[0]).toMatchObject({ field: 'Price', value: '12,50' });
    expect(issuesOf({ Code: 'A', Price: '12.50' }, { decimalComma: true })[0]).toMatchObject({ field: 'Price', value: '12.50' });
  });

  it('reads booleans from words, 1/0 and BIT(1) buffers', () => {
    const raw = { Code: 'A', ForSale: 'si', Published: 'NO', IsItem: 1 };
    expect(fieldsOf(raw)).toEqual({ Code: 'A', ForSale: true, Published: false, IsItem: true });
    expect(fieldsOf({ Code: 'A', ForSale: 'true', Published: '0', IsItem: Buffer.from([0]) })).toEqual({
      Code: 'A',
      ForSale: true,
      Published: false,
      IsItem: false,
    });
  });

  it('trims text, and turns numbers in text fields into text', () => {
    expect(fieldsOf({ Code: '  SKU-1 ', Name: ' Mate ', Code2: 779123 })).toEqual({ Code: 'SKU-1', Name: 'Mate', Code2: '779123' });
  });

  it('leaves blank and null values out, except nullable fields, which keep an explicit null', () => {
    expect(fieldsOf({ Code: 'A', Stock: '', Price: null, Name: '  ', ParentItemCode: null, PriceMode: null })).toEqual({
      Code: 'A',
      ParentItemCode: null,
      PriceMode: null,
    });
  });

  it('accepts Properties as a list, as JSON text, or as a JSON object', () => {
    const list = [{ Key: 'Color', Value: 'Rojo' }];
    expect(fieldsOf({ Code: 'A', Properties: list }).Properties).toEqual(list);
    expect(fieldsOf({ Code: 'A', Properties: JSON.stringify(list) }).Properties).toEqual(list);
    expect(fieldsOf({ Code: 'A', Properties: { Talle: 42 } }).Properties).toEqual([{ Key: 'Talle', Value: '42' }]);
    expect(issuesOf({ Code: 'A', Properties: '[1, 2]' })[0]).toMatchObject({ field: 'Properties' });
  });

  it('accepts ExtendedWarranty as a list or JSON text', () => {
    const warranty = [{ Name: 'Garantía', Price: 10, Active: true, Cant: 1, Code: 'G-1' }];
    expect(fieldsOf({ Code: 'A', ExtendedWarranty: JSON.stringify(warranty) }).ExtendedWarranty).toEqual(warranty);
  });
});

describe('normalizeRecord columns', () => {
  it('matches columns to fields ignoring case and ignores unknown columns, telling the caller', () => {
    const ignored: string[] = [];
    const result = normalizeRecord({ code: 'A', STOCK: 3, offerprice: '9.90', Artículo: 'x' }, INVENTORY_FIELDS, {
      ref,
      onIgnored: (column) => ignored.push(column),
    });
    expect(result).toEqual({ fields: { Code: 'A', Stock: 3, OfferPrice: 9.9 }, cursor: undefined });
    expect(ignored).toEqual(['Artículo']);
  });

  it('renames columns through the mapping, which wins over a same-named column', () => {
    const mapping = { Código: 'Code', existencia: 'stock', Modificado: 'cursor' };
    const result = normalizeRecord({ code: 'ignored', Código: 'SKU-1', EXISTENCIA: '4', modificado: 'T1' }, INVENTORY_FIELDS, { ref, mapping });
    expect(result).toEqual({ fields: { Code: 'SKU-1', Stock: 4 }, cursor: 'T1' });
  });

  it('carries only the fields present: a stock-only row yields Code and Stock', () => {
    expect(fieldsOf({ Code: 'A', Stock: 0 })).toEqual({ Code: 'A', Stock: 0 });
  });

  it('returns the cursor column separately from the fields', () => {
    expect(normalizeRecord({ Code: 'A', CURSOR: 17 }, INVENTORY_FIELDS, { ref })).toEqual({ fields: { Code: 'A' }, cursor: 17 });
  });

  it('lists mapping targets that are neither fields nor cursor', () => {
    expect(unknownMappingTargets(INVENTORY_FIELDS, { a: 'stock', b: 'Cursor', c: 'Stok' })).toEqual(['Stok']);
  });
});

describe('normalizeRecord issues', () => {
  it('rejects a value that cannot be coerced, naming the record by its Code', () => {
    expect(issuesOf({ Code: 'SKU-1', Stock: '12abc', Price: '9.99' })).toEqual([
      { record: 'SKU-1', field: 'Stock', value: '12abc', rule: 'integer' },
    ]);
  });

  it('rejects non-boolean words and stock that is no number', () => {
    expect(issuesOf({ Code: 'A', Stock: 'lots', ForSale: 'maybe' }).map((issue) => issue.field)).toEqual(['Stock', 'ForSale']);
  });

  it('requires Code, naming the record by its ref when Code is missing or blank', () => {
    expect(issuesOf({ Stock: 3 })).toEqual([{ record: ref, field: 'Code', value: undefined, rule: 'required' }]);
    expect(issuesOf({ Code: '  ', Stock: 3 })).toEqual([{ record: ref, field: 'Code', value: '  ', rule: 'required' }]);
  });

  it('leaves range rules to the flows: negative stock and zero price pass here', () => {
    expect(fieldsOf({ Code: 'A', Stock: -3, Price: 0, Taxes: 150 })).toEqual({ Code: 'A', Stock: -3, Price: 0, Taxes: 150 });
  });

  it('coerces fulfillment records named by SaleId or by ExternalReference and SiteId', () => {
    expect(normalizeRecord({ saleid: '1001', status: '3', trackingcode: ' TRK-9 ' }, FULFILLMENT_FIELDS, { ref })).toEqual({
      fields: { SaleId: 1001, Status: 3, TrackingCode: 'TRK-9' },
      cursor: undefined,
    });
    expect(normalizeRecord({ external_ref: 'ERP-7', siteid: '2', status: '6' }, FULFILLMENT_FIELDS, { ref, mapping: { external_ref: 'ExternalReference' } })).toEqual({
      fields: { ExternalReference: 'ERP-7', SiteId: 2, Status: 6 },
      cursor: undefined,
    });
  });
});

describe('fractional stock (issue 22: 5.5 kg refused the whole row, price included)', () => {
  const row = { Code: 'KG-1', Stock: '5.500000000', Price: '12.50' };
  const normalize = (raw: Record<string, unknown>, stockRounding?: 'floor' | 'round' | 'reject') =>
    normalizeRecord(raw, INVENTORY_FIELDS, { ref, ...(stockRounding ? { stockRounding } : {}) });

  it('floors by default (never more stock than there is), also below zero', () => {
    expect(normalize(row)).toEqual({ fields: { Code: 'KG-1', Stock: 5, Price: 12.5 }, cursor: undefined });
    expect(normalize({ Code: 'KG-1', Stock: -0.5 })).toMatchObject({ fields: { Stock: -1 } });
  });

  it('rounds half up with round', () => {
    expect(normalize(row, 'round')).toMatchObject({ fields: { Stock: 6 } });
    expect(normalize({ ...row, Stock: '5.499' }, 'round')).toMatchObject({ fields: { Stock: 5 } });
  });

  it('with reject refuses the Stock field alone, naming record, field, value and rule; the price still flows', () => {
    expect(normalize(row, 'reject')).toEqual({
      fields: { Code: 'KG-1', Price: 12.5 },
      cursor: undefined,
      refused: [{ record: 'KG-1', field: 'Stock', value: '5.500000000', rule: 'whole number (stockRounding: reject)' }],
    });
    expect(normalize({ ...row, Stock: '5.000000000' }, 'reject')).toMatchObject({ fields: { Stock: 5 } });
  });

  it('reports a refused Stock with the other issues of a row refused whole', () => {
    const result = normalize({ Code: 'KG-1', Stock: 5.5, ForSale: 'maybe' }, 'reject');
    expect('issues' in result && result.issues.map((issue) => issue.field)).toEqual(['ForSale', 'Stock']);
  });
});
