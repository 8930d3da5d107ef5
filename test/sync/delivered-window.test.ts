import { describe, expect, it } from 'vitest';

import { DeliveredWindow } from '../../src/sync/delivered-window.js';

const at = (ms: number) => Date.parse('2025-01-01T00:00:00Z') + ms;

describe('DeliveredWindow', () => {
  it('knows a record by key, version and values: another version or value of the SKU is new', () => {
    const window = new DeliveredWindow(60_000);
    window.add([{ key: 'A', version: at(0), fields: { Code: 'A', Stock: 1 } }]);
    expect(window.has({ key: 'A', version: at(0), fields: { Code: 'A', Stock: 1 } })).toBe(true);
    expect(window.has({ key: 'A', version: at(0), fields: { Code: 'A', Stock: 2 } })).toBe(false);
    expect(window.has({ key: 'A', version: at(-1), fields: { Code: 'A', Stock: 1 } })).toBe(false);
    expect(window.has({ key: 'B', version: at(0), fields: { Code: 'A', Stock: 1 } })).toBe(false);
  });

  it('forgets records older than the overlap before the stored cursor, keeps those a poll still re-reads', () => {
    const window = new DeliveredWindow(60_000);
    const old = { key: 'A', version: at(0), fields: { Stock: 1 } };
    const recent = { key: 'B', version: at(30_000), fields: { Stock: 2 } };
    window.add([old, recent]);
    window.forgetBefore(at(70_000));
    expect(window.has(old)).toBe(false);
    expect(window.has(recent)).toBe(true);
  });

  it('holds at most maxEntries, dropping the oldest first', () => {
    const window = new DeliveredWindow(60_000, 3);
    const records = [1, 2, 3, 4, 5].map((n) => ({ key: `S${n}`, version: at(n), fields: { Stock: n } }));
    window.add(records);
    expect(window.size).toBe(3);
    expect(records.map((r) => window.has(r))).toEqual([false, false, true, true, true]);
  });

  it('knows a delivered raw row by its key and gives its cursor, until the row falls out of the window', () => {
    const window = new DeliveredWindow(60_000, 2);
    const cursor = (ms: number) => new Date(at(ms)).toISOString();
    window.add([
      { key: 'A', version: at(0), fields: { Stock: 1 }, rowKey: 'row-A', cursor: cursor(0) },
      { key: 'B', version: at(30_000), fields: { Stock: 2 }, rowKey: 'row-B', cursor: cursor(30_000) },
      // Without a row key (a read not given the window) the record is known by its identity only.
      { key: 'C', version: at(40_000), fields: { Stock: 3 } },
    ]);
    expect(window.cursorOf('row-A')).toBe(cursor(0));
    expect(window.cursorOf('row-B')).toBe(cursor(30_000));
    expect(window.cursorOf('row-C')).toBeUndefined();
    window.forgetBefore(at(70_000));
    expect(window.cursorOf('row-A')).toBeUndefined();
    expect(window.cursorOf('row-B')).toBe(cursor(30_000));
    // At most maxEntries rows too, the oldest dropped first.
    window.add([1, 2].map((n) => ({ key: `D${n}`, version: at(50_000 + n), fields: { Stock: n }, rowKey: `row-D${n}`, cursor: cursor(50_000 + n) })));
    expect(['row-B', 'row-D1', 'row-D2'].map((key) => window.cursorOf(key) !== undefined)).toEqual([false, true, true]);
  });
});
