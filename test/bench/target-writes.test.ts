import { describe, expect, it } from 'vitest';

import type { PutBody } from '../../bench/lib/raw-loops.js';
import type { Write } from '../../bench/lib/simulator-process.js';
import { fanOut, writeProblems } from '../../bench/lib/target-writes.js';

/** One Code on sites 1 and 2: a stock target per site and a price target per site on list 7. */
const expected: PutBody[] = [
  { InternalId: 0, Code: 'SKU-1', SiteId: 1, Stock: 5 },
  { InternalId: 0, Code: 'SKU-1', SiteId: 2, Stock: 5 },
  { InternalId: 0, Code: 'SKU-1', SiteId: 1, PriceListId: 7, PriceListCode: 'Wholesale', Price: 9.9 },
  { InternalId: 0, Code: 'SKU-1', SiteId: 2, PriceListId: 7, PriceListCode: 'Wholesale', Price: 9.9 },
];

/** The writes the simulator logs for `bodies`, in order (fields without InternalId and Code). */
function written(bodies: readonly PutBody[]): Write[] {
  return bodies.map(({ InternalId: _id, Code, ...fields }, i) => ({ seq: i + 1, at: 1000 + i, code: Code, op: 'update', fields }));
}

describe('the targets benchmark checks every store write', () => {
  it('accepts each target written once with its fields, in any order', () => {
    expect(writeProblems(expected, written([...expected].reverse()))).toEqual([]);
  });

  it('names a site the fan-out forgot, a target written twice and one written to another list', () => {
    const [stock1, , price1, price2] = expected as [PutBody, PutBody, PutBody, PutBody];
    const writes = written([stock1, stock1, price1, { ...price2, PriceListId: 8 }]);
    expect(writeProblems(expected, writes)).toEqual([
      '2 target(s) never written: SKU-1 site 2 list -; SKU-1 site 2 list 7',
      '1 write(s) of a target already written: SKU-1 site 1 list -',
      '1 write(s) of a target not expected: SKU-1 site 2 list 8',
    ]);
  });

  it('names a write whose value or list code differs, and a price sent without its site', () => {
    const [stock1, stock2, price1, price2] = expected as [PutBody, PutBody, PutBody, PutBody];
    const { SiteId: _site, ...siteless } = price2;
    const writes = written([stock1, { ...stock2, Stock: 6 }, { ...price1, PriceListCode: 'Standard Selling' }, siteless]);
    expect(writeProblems(expected, writes)).toEqual([
      '1 target(s) never written: SKU-1 site 2 list 7',
      '1 write(s) of a target not expected: SKU-1 site - list 7',
      '2 write(s) with other fields: SKU-1 site 2 list -: sent {"SiteId":2,"Stock":6}, expected {"SiteId":2,"Stock":5}; ' +
        'SKU-1 site 1 list 7: sent {"SiteId":1,"PriceListId":7,"PriceListCode":"Standard Selling","Price":9.9}, expected {"SiteId":1,"PriceListId":7,"PriceListCode":"Wholesale","Price":9.9}',
    ]);
  });

  it('counts the writes per site and list', () => {
    expect(fanOut(written([...expected, { InternalId: 0, Code: 'SKU-2', Stock: 1, Price: 2 }]))).toEqual({ 'no site': 1, 'site 1': 1, 'site 1 list 7': 1, 'site 2': 1, 'site 2 list 7': 1 });
  });
});
