import { describe, expect, it } from 'vitest';

import { sameValue } from '../../../../src/sync/inventory/reconcile/compare.js';

describe('sameValue', () => {
  it('treats numbers within half a cent as equal, including numeric strings from the store', () => {
    expect(sameValue(10.5, 10.504)).toBe(true);
    expect(sameValue(10.5, '10.50')).toBe(true);
    expect(sameValue(10.5, 10.51)).toBe(false);
    expect(sameValue(10.5, '10,50')).toBe(true);
    expect(sameValue(1234.56, '1.234,56')).toBe(false);
    expect(sameValue(3, null)).toBe(false);
  });

  it('compares text trimmed, booleans strictly and a missing ERP value with an empty store value', () => {
    expect(sameValue('W1', ' W1 ')).toBe(true);
    expect(sameValue('12', 12)).toBe(true);
    expect(sameValue(true, 'true')).toBe(false);
    expect(sameValue(null, undefined)).toBe(true);
    expect(sameValue(null, '')).toBe(true);
  });

  it('compares lists element by element and objects only on the keys the ERP provides', () => {
    expect(sameValue([{ Key: 'color', Value: 'red' }], [{ Key: 'color', Value: 'red', Extra: 1 }])).toBe(true);
    expect(sameValue([{ Key: 'color', Value: 'red' }], [{ Key: 'color', Value: 'blue' }])).toBe(false);
    expect(sameValue([{ Key: 'a', Value: '1' }], [])).toBe(false);
  });
});
