/**
 * Which price-list changes need a reconcile (issue 28): the ERP's rows are kept in Redis by list id, so
 * a list mapped to an id the last start did not use needs them re-read; a code renamed on the same id
 * (the mapping fix of issue 28's point 2) or a list removed does not.
 */
import { describe, expect, it } from 'vitest';

import { priceListIdsMoved, type TargetSettings } from '../../../src/sync/inventory/target-settings.js';

const lists = (...pairs: Array<[number, string]>): TargetSettings => ({ 'inventory.priceLists': JSON.stringify(pairs.map(([id, code]) => ({ id, code }))) });

describe('priceListIdsMoved', () => {
  it.each([
    ['unchanged', lists([1, 'RETAIL'], [2, 'WHOLESALE']), lists([1, 'RETAIL'], [2, 'WHOLESALE']), false],
    ['a code renamed on the same id', lists([1, 'Standard Selling']), lists([1, 'RETAIL']), false],
    ['a list removed', lists([1, 'RETAIL'], [2, 'WHOLESALE']), lists([1, 'RETAIL']), false],
    ['the lists listed in another order', lists([1, 'RETAIL'], [2, 'WHOLESALE']), lists([2, 'WHOLESALE'], [1, 'RETAIL']), false],
    ['a list added', lists([1, 'RETAIL']), lists([1, 'RETAIL'], [2, 'WHOLESALE']), true],
    ['a code moved to another id', lists([1, 'RETAIL'], [2, 'WHOLESALE']), lists([1, 'RETAIL'], [3, 'WHOLESALE']), true],
    ['two codes swapping ids', lists([1, 'RETAIL'], [2, 'WHOLESALE']), lists([2, 'RETAIL'], [1, 'WHOLESALE']), true],
    ['the first lists of a start that had none', lists(), lists([1, 'RETAIL']), true],
  ])('%s: moved %4$s', (_name, before, now, moved) => {
    expect(priceListIdsMoved(before, now)).toBe(moved);
  });
});
