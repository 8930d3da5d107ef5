/**
 * `rowKey` (how a poll recognises a re-read row before normalising it) and `toBatchParts` with rows it
 * already delivered: two rows share a key only when they normalise alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { pollChanges, type PollSettings, rowKey, toBatchParts } from '../../src/erp/polling.js';
import type { Cursor } from '../../src/erp/types.js';
import { silentLogger } from '../../src/log.js';

/** The same columns in the same order, each value of the same kind and equal (Dates by instant). */
function sameRow(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const columns = Object.keys(a);
  if (columns.join('\u0001') !== Object.keys(b).join('\u0001') || columns.length !== Object.keys(b).length) return false;
  return columns.every((column) => {
    const x = a[column];
    const y = b[column];
    if (x instanceof Date || y instanceof Date) return x instanceof Date && y instanceof Date && Object.is(x.getTime(), y.getTime());
    return typeof x === typeof y && Object.is(x, y);
  });
}

// A small alphabet holding the characters the key itself uses, so that near-collisions are common.
const text = fc.string({ unit: fc.constantFrom('a', '1', ':', 's', 'n', 'z', '\u0000', '-'), maxLength: 4 });
const value = fc.oneof(
  text,
  fc.constantFrom(0, -0, 1, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 11, 10),
  fc.constantFrom(null, undefined, true, false, 0n, 1n, 11n),
  fc.constantFrom(0, 1, 11, Number.NaN).map((ms) => new Date(ms)),
);
const row = fc.array(fc.tuple(text, value), { maxLength: 3 }).map((pairs) => {
  const out: Record<string, unknown> = {};
  for (const [column, v] of pairs) out[column] = v;
  return out;
});

describe('rowKey', () => {
  it('gives two rows the same key exactly when they have the same columns, order, kinds and values', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 2, maxLength: 12 }), (rows) => {
        const keys = rows.map((r) => rowKey(r));
        for (let i = 0; i < rows.length; i++) {
          for (let j = i + 1; j < rows.length; j++) {
            expect(keys[i] === keys[j]).toBe(sameRow(rows[i]!, rows[j]!));
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('tells apart values that print alike', () => {
    const pairs: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ Stock: 5 }, { Stock: '5' }],
      [{ Stock: null }, { Stock: 'null' }],
      [{ Stock: null }, { Stock: undefined }],
      [{ Stock: null }, {}],
      [{ Stock: 0 }, { Stock: -0 }],
      [{ Stock: Number.NaN }, { Stock: 'NaN' }],
      [{ Stock: 1n }, { Stock: 1 }],
      [{ ForSale: true }, { ForSale: 'true' }],
      [{ cursor: new Date('2025-01-01T00:00:00Z') }, { cursor: '2025-01-01T00:00:00.000Z' }],
      [{ ab: 'c' }, { a: 'bc' }],
      [{ a: 'b', c: 'd' }, { c: 'd', a: 'b' }],
      [{ Code: 'A', Stock: 12 }, { Code: 'A', Stock: 1, '2': 2 }],
      // A value that spells the next column (strings carry their length) …
      [{ a: 'x1:bsy' }, { a: 'x', b: 'y' }],
      // … and a column name that spells a value (names carry theirs).
      [{ a: null, b: 1 }, { azb: 1 }],
    ];
    for (const [a, b] of pairs) expect(rowKey(a)).not.toBe(rowKey(b));
  });

  it('has no key for a row holding an object, so such a row is always normalised', () => {
    expect(rowKey({ Code: 'A', Stock: Buffer.from('5') })).toBeUndefined();
    expect(rowKey({ Code: 'A', Stock: { value: 5 } })).toBeUndefined();
  });
});

describe('toBatchParts with known rows', () => {
  const settings: PollSettings = {
    source: 'erp',
    rowNoun: 'row',
    overlapMs: 60_000,
    catalog: INVENTORY_FIELDS,
    mapping: {},
    logger: silentLogger(),
    onIgnored: () => undefined,
    onEmptyFirstPoll: () => undefined,
    pagesByKey: false,
    tiebreakHint: '',
    perRowKeyHint: '',
  };
  const rows = [
    { code: 'A', stock: 1, cursor: new Date('2025-01-01T00:00:01Z') },
    { code: 'B', stock: -1, cursor: new Date('2025-01-01T00:00:02Z') },
    { code: 'C', stock: 3, cursor: new Date('2025-01-01T00:00:03Z') },
  ];

  it('normalises every row when nothing is known, each valid record carrying its row key', () => {
    const parts = toBatchParts(rows, settings, true, { cursorOf: () => undefined });
    expect(parts.known).toBe(0);
    expect(parts.records.map((r) => [r.fields.Code, r.rowKey])).toEqual([
      ['A', rowKey(rows[0]!)],
      ['B', rowKey(rows[1]!)],
      ['C', rowKey(rows[2]!)],
    ]);
    expect(parts.cursors).toEqual(['2025-01-01T00:00:01.000Z', '2025-01-01T00:00:02.000Z', '2025-01-01T00:00:03.000Z']);
  });

  it('leaves a known row out, counts it and keeps the cursor it was delivered with', () => {
    const known = new Map<string, Cursor>([[rowKey(rows[0]!)!, '2025-01-01T00:00:01.000Z']]);
    const parts = toBatchParts(rows, settings, true, { cursorOf: (key) => known.get(key) });
    expect(parts.known).toBe(1);
    expect(parts.records.map((r) => r.fields.Code)).toEqual(['B', 'C']);
    expect(parts.cursors).toEqual(['2025-01-01T00:00:01.000Z', '2025-01-01T00:00:02.000Z', '2025-01-01T00:00:03.000Z']);
  });

  it('with dates still text (revive), recognises a known row by its text and parses only the new rows', () => {
    const text = [
      { code: 'A', stock: 1, cursor: '2025-01-01 00:00:01+00' },
      { code: 'B', stock: 2, cursor: '2025-01-01 00:00:02.5+00' },
    ];
    const revived: string[] = [];
    // pg's text placed by hand: what the driver's parser makes of these two.
    const parse = (raw: Readonly<Record<string, unknown>>) => {
      revived.push(raw.code as string);
      return { ...raw, cursor: new Date(String(raw.cursor).replace(' ', 'T').replace('+00', 'Z')) };
    };
    const known = new Map<string, Cursor>([[rowKey(text[0]!)!, '2025-01-01T00:00:01.000Z']]);
    const parts = toBatchParts(text, settings, true, { cursorOf: (key) => known.get(key) }, parse);
    expect(revived).toEqual(['B']);
    expect(parts.known).toBe(1);
    expect(parts.records).toEqual([{ ref: 'erp row cursor=2025-01-01T00:00:02.500Z Code=B', cursor: '2025-01-01T00:00:02.500Z', fields: { Code: 'B', Stock: 2 }, rowKey: rowKey(text[1]!) }]);
    expect(parts.cursors).toEqual(['2025-01-01T00:00:01.000Z', '2025-01-01T00:00:02.500Z']);
  });

  it('pollChanges parses the new rows a reader returns with their dates still text, by the reader\'s revive (a naive timestamp in the source\'s zone)', async () => {
    // pg's text of a naive timestamp: only the reader knows its zone (here UTC−5, New York in January).
    const text = [
      { code: 'A', stock: 1, cursor: '2025-01-01 00:00:01' },
      { code: 'B', stock: 2, cursor: '2025-01-01 00:00:02.5' },
    ];
    const revive = (raw: Readonly<Record<string, unknown>>) => ({ ...raw, cursor: new Date(`${String(raw.cursor).replace(' ', 'T')}-05:00`) });
    const known = new Map<string, Cursor>([[rowKey(text[0]!)!, '2025-01-01T05:00:01.000Z']]);
    const batch = await pollChanges(null, 10, settings, () => Promise.resolve({ rows: text, revive }), { known: { cursorOf: (key) => known.get(key) } });
    // B at 00:00:02.5 in UTC−5 is 05:00:02.5 UTC; A is known (its delivered cursor kept).
    expect(batch.records.map((record) => [record.fields.Code, record.cursor])).toEqual([['B', '2025-01-01T05:00:02.500Z']]);
    expect(batch).toMatchObject({ known: 1, nextCursor: '2025-01-01T05:00:02.500Z' });
  });

  it('gives no row key without known rows (a snapshot, a source read by hand)', () => {
    const parts = toBatchParts(rows, settings, true);
    expect(parts.records.every((r) => r.rowKey === undefined)).toBe(true);
  });
});
