import { describe, expect, it } from 'vitest';

import { jobName } from '../../../src/sync/inventory/enqueue.js';
import { fingerprint } from '../../../src/sync/inventory/snapshot/diff-state.js';
import { homeSiteOf, homeTargetOf, keyOf, priceListOf, splitByTarget, stateKeyOf, targetBody, targetKey, targetLabel, targetParts } from '../../../src/sync/inventory/target-key.js';

const LISTS = [
  { id: 1, code: 'RETAIL' },
  { id: 7, code: 'WHOLESALE' },
];

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

  it('keys the default target as the bare Code (the key before targets), and a price list by its id whichever way the record names it', () => {
    expect(keyOf({ code: 'A-1' })).toBe('A-1');
    const byCode = targetKey({ fields: { Code: 'A-1', SiteId: 2, PriceListCode: 'WHOLESALE', Price: 3 } }, LISTS);
    expect(byCode).toBe(targetKey({ fields: { Code: 'A-1', SiteId: 2, PriceListId: 7 } }, LISTS));
    expect(targetParts(byCode!)).toEqual({ code: 'A-1', siteId: 2, priceListId: 7 });
    expect(targetParts(keyOf({ code: 'A-1', priceListId: 1 }))).toEqual({ code: 'A-1', priceListId: 1 });
    expect(targetLabel(byCode!, LISTS)).toBe('A-1 (site 2, price list WHOLESALE)');
    expect(jobName([byCode!])).toBe('A-1 (site 2, price list 7)');
    expect(targetBody(byCode!, LISTS)).toEqual({ Code: 'A-1', SiteId: 2, PriceListId: 7, PriceListCode: 'WHOLESALE' });
  });

  it('splits a record: prices to its price list, the other fields to (Code, SiteId); the naming fields to neither', () => {
    const fields = { Code: 'A-1', SiteId: 2, PriceListCode: 'RETAIL', Price: 9, OfferPrice: 8, Stock: 4 };
    expect(splitByTarget('A-1', fields, LISTS)).toEqual([
      { key: keyOf({ code: 'A-1', siteId: 2 }), fields: { Code: 'A-1', Stock: 4 } },
      { key: keyOf({ code: 'A-1', siteId: 2, priceListId: 1 }), fields: { Price: 9, OfferPrice: 8 } },
    ]);
    // No site, no list: the record as it is, one target (the default one).
    const plain = { Code: 'A-1', Stock: 4, Price: 9 };
    expect(splitByTarget('A-1', plain, LISTS)).toEqual([{ key: 'A-1', fields: plain }]);
  });

  it('refuses a price list not configured, and a code and an id that disagree, naming field, value and rule', () => {
    expect(priceListOf({ PriceListCode: 'OUTLET' }, LISTS, 'SKU A-1')).toEqual({ record: 'SKU A-1', field: 'PriceListCode', value: 'OUTLET', rule: 'a price list of inventory.priceLists (1:RETAIL, 7:WHOLESALE)' });
    expect(priceListOf({ PriceListCode: 'RETAIL', PriceListId: 7 }, LISTS)).toMatchObject({ field: 'PriceListId', value: 7, rule: 'the id of PriceListCode RETAIL (1)' });
    expect(priceListOf({ Stock: 1 }, LISTS)).toBeUndefined();
  });
});

describe('the home site (store.siteId listed in inventory.sites)', () => {
  const sites = [{ siteId: 1 }, { siteId: 2 }];
  it('is store.siteId only when the sites list it', () => {
    expect(homeSiteOf({ store: { siteId: 2 }, inventory: { sites } })).toBe(2);
    expect(homeSiteOf({ store: { siteId: 3 }, inventory: { sites } })).toBeUndefined();
    expect(homeSiteOf({ store: {}, inventory: { sites } })).toBeUndefined();
    expect(homeSiteOf({ store: { siteId: 2 }, inventory: { sites: [] } })).toBeUndefined();
  });

  it("keeps the home site's targets under the bare-Code keys, price list kept, and no other site's", () => {
    expect(stateKeyOf(keyOf({ code: 'A-1', siteId: 2 }), 2)).toBe('A-1');
    expect(stateKeyOf(keyOf({ code: 'A-1', siteId: 2, priceListId: 7 }), 2)).toBe(keyOf({ code: 'A-1', priceListId: 7 }));
    expect(stateKeyOf(keyOf({ code: 'A-1', siteId: 1 }), 2)).toBe(keyOf({ code: 'A-1', siteId: 1 }));
    expect(stateKeyOf(keyOf({ code: 'A-1', siteId: 2 }), undefined)).toBe(keyOf({ code: 'A-1', siteId: 2 }));
  });

  it("reads a key naming no site (a job queued before the sites were listed) as the home site's target", () => {
    expect(homeTargetOf('A-1', 2)).toBe(keyOf({ code: 'A-1', siteId: 2 }));
    expect(homeTargetOf(keyOf({ code: 'A-1', priceListId: 7 }), 2)).toBe(keyOf({ code: 'A-1', siteId: 2, priceListId: 7 }));
    expect(homeTargetOf(keyOf({ code: 'A-1', siteId: 1 }), 2)).toBe(keyOf({ code: 'A-1', siteId: 1 }));
    expect(homeTargetOf('A-1', undefined)).toBe('A-1');
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
