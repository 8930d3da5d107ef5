import { describe, expect, it } from 'vitest';

import { exceedsMassGuard, MASS_GUARD_MIN_COUNT } from '../../../../src/sync/inventory/snapshot/mass-guard.js';

describe('exceedsMassGuard', () => {
  it('holds more than the fraction when more than ten SKUs are affected', () => {
    expect(exceedsMassGuard(11, 100, 0.05)).toBe(true);
    expect(exceedsMassGuard(1000, 1000, 0.05)).toBe(true);
  });

  it('lets a fraction at or below the limit through', () => {
    expect(exceedsMassGuard(50, 1000, 0.05)).toBe(false);
    expect(exceedsMassGuard(51, 1000, 0.05)).toBe(true);
  });

  it('never holds ten SKUs or fewer, even all of a small catalogue', () => {
    expect(MASS_GUARD_MIN_COUNT).toBe(10);
    expect(exceedsMassGuard(10, 10, 0.05)).toBe(false);
    expect(exceedsMassGuard(0, 0, 0.05)).toBe(false);
  });

  it('takes another minimum count', () => {
    expect(exceedsMassGuard(3, 10, 0.05, 2)).toBe(true);
    expect(exceedsMassGuard(2, 10, 0.05, 2)).toBe(false);
  });

  it('holds a mass effect on an unknown total', () => {
    expect(exceedsMassGuard(11, 0, 0.05)).toBe(true);
  });
});
