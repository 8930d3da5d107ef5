import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { configErrorOf } from '../support/config-error.js';

function problems(priceLists: unknown): string {
  return configErrorOf(() => loadConfig({ env: {}, overrides: { inventory: { priceLists } } })).message;
}

describe('inventory.priceLists', () => {
  it('defaults to none, and takes the store\'s lists as { id, code }', () => {
    expect(loadConfig({ env: {} }).inventory.priceLists).toEqual([]);
    const lists = [
      { id: 1, code: 'RETAIL' },
      { id: 2, code: 'WHOLESALE' },
    ];
    expect(loadConfig({ env: {}, overrides: { inventory: { priceLists: lists } } }).inventory.priceLists).toEqual(lists);
  });

  it('refuses a list named twice, an id that is not a positive integer, and a mistyped key', () => {
    expect(problems([{ id: 1, code: 'A' }, { id: 1, code: 'B' }])).toMatch(/price list id 1 is listed twice/);
    expect(problems([{ id: 1, code: 'A' }, { id: 2, code: 'A' }])).toMatch(/price list code A is listed twice/);
    expect(problems([{ id: 0, code: 'A' }])).toMatch(/priceLists/);
    expect(problems([{ id: 1, cod: 'A' }])).toMatch(/cod/);
  });
});
