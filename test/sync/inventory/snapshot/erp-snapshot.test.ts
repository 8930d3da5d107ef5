import { describe, expect, it } from 'vitest';

import { ErpSnapshot, timestampMs } from '../../../../src/sync/inventory/snapshot/erp-snapshot.js';

/** Every row of `snapshot` as the record it was made from. */
function records(snapshot: ErpSnapshot): Array<{ sku: string; source: string; cursor: unknown; fields: Record<string, unknown> }> {
  const out = [];
  for (const [sku, first] of snapshot.skus()) {
    for (let row: number | undefined = first; row !== undefined; row = snapshot.next(row)) {
      out.push({ sku, source: snapshot.source(row), cursor: snapshot.cursor(row), fields: snapshot.fields(row) });
    }
  }
  return out;
}

describe('ErpSnapshot', () => {
  it('gives back each record as it was added: fields of any kind and shape, cursors of any kind', () => {
    const snapshot = new ErpSnapshot();
    const added = [
      { sku: 'A', source: 'erp', cursor: '2026-11-24T05:47:33.320Z', fields: { Code: 'A', Stock: 3, Price: 10.01 } },
      { sku: 'B', source: 'erp', cursor: '2024-02-29T00:00:00.000Z', fields: { Code: 'B', Stock: 0, Price: 7 } },
      // Another shape, with fields that appear only now (their columns start late) and one left out.
      { sku: 'C', source: 'erp', cursor: 42, fields: { Code: 'C', Name: 'Ñandú', Properties: [{ Key: 'k', Value: 'v' }], ParentItemId: null } },
      { sku: 'D', source: 'erp', cursor: null, fields: { Code: 'D', Price: 1.5, Stock: 2 } },
      { sku: 'E', source: 'erp', cursor: 'v-17', fields: { Code: 'E', Stock: 5, Price: 1 } },
      // Text that looks like a timestamp but is not one toISOString writes stays as it is.
      { sku: 'F', source: 'erp', cursor: '2026-02-30T00:00:00.000Z', fields: { Code: 'F', Stock: 1, Price: 2 } },
      { sku: 'G', source: 'erp', cursor: '2026-11-24T24:00:00.000Z', fields: { Code: 'G' } },
    ];
    for (const { sku, source, cursor, fields } of added) snapshot.add(source, sku, { cursor, fields });
    expect(records(snapshot)).toEqual(added.map(({ fields: { Code: _code, ...fields }, ...rest }) => ({ ...rest, fields })));
    expect(snapshot.fieldNames(snapshot.first('D')!)).toEqual(['Price', 'Stock']);
    expect([snapshot.size, snapshot.rows]).toEqual([7, 7]);
  });

  it('tells a field the record does not have (undefined) from one it has as null or 0', () => {
    const snapshot = new ErpSnapshot();
    snapshot.add('erp', 'A', { cursor: null, fields: { Code: 'A', Stock: 0, ParentItemId: null } });
    snapshot.add('erp', 'B', { cursor: null, fields: { Code: 'B', Price: 3 } });
    const [a, b] = [snapshot.first('A')!, snapshot.first('B')!];
    expect([snapshot.get(a, 'Stock'), snapshot.get(a, 'ParentItemId'), snapshot.get(a, 'Price')]).toEqual([0, null, undefined]);
    expect([snapshot.get(b, 'Stock'), snapshot.get(b, 'Price')]).toEqual([undefined, 3]);
    expect(snapshot.first('Z')).toBeUndefined();
  });

  it('chains the records of one SKU from several sources in the order they were read', () => {
    const snapshot = new ErpSnapshot();
    snapshot.add('stock', 'A', { cursor: 1, fields: { Code: 'A', Stock: 3 } });
    snapshot.add('stock', 'B', { cursor: 2, fields: { Code: 'B', Stock: 4 } });
    snapshot.add('prices', 'A', { cursor: 3, fields: { Code: 'A', Price: 9.5 } });
    snapshot.add('names', 'A', { cursor: 4, fields: { Code: 'A', Name: 'x' } });
    expect(records(snapshot).map(({ sku, source, fields }) => [sku, source, fields])).toEqual([
      ['A', 'stock', { Stock: 3 }],
      ['A', 'prices', { Price: 9.5 }],
      ['A', 'names', { Name: 'x' }],
      ['B', 'stock', { Stock: 4 }],
    ]);
    expect([snapshot.size, snapshot.rows]).toEqual([2, 4]);
  });
});

describe('timestampMs', () => {
  it('reads the timestamps toISOString writes, exactly, and nothing else', () => {
    for (const text of ['2026-11-24T05:47:33.320Z', '2024-02-29T00:00:00.000Z', '2000-02-29T23:59:59.999Z', '0100-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
      expect(new Date(timestampMs(text)).toISOString()).toBe(text);
    }
    for (const value of ['2023-02-29T00:00:00.000Z', '1900-02-29T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-11-24T24:00:00.000Z', '2026-11-24T05:60:00.000Z', '0099-01-01T00:00:00.000Z', '2026-11-24 05:47:33.320Z', '2026-11-24T05:47:33.32Z', '2026-11-24T05:47:33.320+00:00', 'abcd-ef-ghTij:kl:mn.opqZ', '2026-11-24T1 :47:33.320Z', '2026-11-24T05:47:33.3 0Z', '2026-1+-24T05:47:33.320Z', 42, null]) {
      expect(timestampMs(value), String(value)).toBeNaN();
    }
  });
});
