import { describe, expect, it } from 'vitest';

import { hashOf, skuState } from '../../../src/sync/inventory/state-hash.js';

// Entries written out as the merge stores them.
const STOCK_9 = '{"value":9,"version":20,"at":20,"source":"erp"}';
const STOCK_7 = '{"value":7,"version":10,"at":10,"source":"erp"}';
const PRICE = '{"value":12.5,"version":20,"at":20,"source":"prices"}';

/** A hash as a script's HGETALL gives it: field, value, field, value. */
const flat = (record: Record<string, string>): string[] => Object.entries(record).flat();

describe('skuState (a target state hash as read)', () => {
  it('files each field by its prefix, from a command\'s record and from a script\'s flat list alike', () => {
    const hash = {
      'p:Stock': STOCK_9,
      'p:Price': '',
      'a:Stock': '10',
      'a:Stock@reservations': '3',
      'k:Stock': '7',
      'k:@at': '1700000000000',
      'e:Stock': STOCK_9,
      'e:Price': PRICE,
      'x:Other': 'ignored',
    };
    for (const read of [skuState(hash, {}), skuState(flat(hash), {})]) {
      // '' is a settled pending field: absent.
      expect([...read.pending.keys()]).toEqual(['Stock']);
      expect(read.pending.get('Stock')).toEqual({ raw: STOCK_9, entry: { value: 9, version: 20, at: 20, source: 'erp' } });
      expect([...read.applied]).toEqual([['Stock', 10], ['Stock@reservations', 3]]);
      expect([...read.acked]).toEqual([['Stock', 7], ['@at', 1_700_000_000_000]]);
      expect(read.erp.get('Stock')).toEqual({ value: 9, version: 20, at: 20, source: 'erp' });
      expect(read.erp.get('Price')).toEqual({ value: 12.5, version: 20, at: 20, source: 'prices' });
      expect(read.erp.size).toBe(2);
    }
  });

  it('reads the ERP entry that differs from the pending one as its own, whichever field comes first', () => {
    // A merge of an older version kept e: newer than p: (or the reverse): each holds what it holds.
    for (const list of [
      ['p:Stock', STOCK_7, 'e:Stock', STOCK_9],
      ['e:Stock', STOCK_9, 'p:Stock', STOCK_7],
    ]) {
      const read = skuState(list, {});
      expect(read.pending.get('Stock')?.entry.value).toBe(7);
      expect(read.erp.get('Stock')?.value).toBe(9);
    }
    for (const list of [
      ['p:Stock', STOCK_9, 'e:Stock', STOCK_9],
      ['e:Stock', STOCK_9, 'p:Stock', STOCK_9],
    ]) {
      const read = skuState(list, {});
      expect(read.pending.get('Stock')?.entry).toEqual({ value: 9, version: 20, at: 20, source: 'erp' });
      expect(read.erp.get('Stock')).toEqual({ value: 9, version: 20, at: 20, source: 'erp' });
    }
  });

  it('reads an ERP entry whose pending field was settled or never written', () => {
    expect(skuState(['p:Stock', '', 'e:Stock', STOCK_7], {}).erp.get('Stock')?.value).toBe(7);
    expect(skuState(['e:Stock', STOCK_7], {}).erp.get('Stock')?.value).toBe(7);
  });

  it('reads an empty hash as an empty state, with the reservations passed through', () => {
    const reservations = { version: '4' };
    const read = skuState([], reservations);
    expect([read.pending.size, read.applied.size, read.acked.size, read.erp.size]).toEqual([0, 0, 0, 0]);
    expect(read.reservations).toBe(reservations);
  });
});

describe('hashOf', () => {
  it('pairs a flat reply into a record, and an empty one into an empty record', () => {
    expect(hashOf(['version', '4', '1:100', '2|1700000000000'])).toEqual({ version: '4', '1:100': '2|1700000000000' });
    expect(hashOf([])).toEqual({});
  });
});
