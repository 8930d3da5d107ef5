import { describe, expect, it } from 'vitest';

import { fingerprint } from '../../../src/sync/inventory/diff-state.js';
import { targetKey, targetLabel, targetParts } from '../../../src/sync/inventory/target-key.js';

describe('targetKey', () => {
  it('is the Code, plus the SiteId when the record names one, and splits back', () => {
    expect(targetKey({ fields: { Code: 'A-1', Stock: 1 } })).toBe('A-1');
    const key = targetKey({ fields: { Code: 'A-1', SiteId: 2 } });
    expect(key).not.toBe('A-1');
    expect(targetParts(key!)).toEqual({ code: 'A-1', siteId: 2 });
    expect(targetParts('A-1')).toEqual({ code: 'A-1' });
    expect(targetLabel(key!)).toBe('A-1 (site 2)');
    expect(targetKey({ fields: { Stock: 1 } })).toBeUndefined();
  });
});

describe('fingerprint', () => {
  it('depends on the values only: not on the column order, the Code or the SiteId', () => {
    const print = fingerprint({ Code: 'A-1', Stock: 5, Price: 10.5 });
    expect(print).toHaveLength(11);
    expect(fingerprint({ Price: 10.5, Stock: 5, Code: 'B-2', SiteId: 3 })).toBe(print);
    expect(fingerprint({ Code: 'A-1', Stock: 6, Price: 10.5 })).not.toBe(print);
    expect(fingerprint({ Code: 'A-1', Stock: 5 })).not.toBe(print);
    // A value's type is part of it: "5" is not 5.
    expect(fingerprint({ Code: 'A-1', Stock: '5', Price: 10.5 })).not.toBe(print);
  });
});
