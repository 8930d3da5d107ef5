import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { configErrorOf } from '../support/config-error.js';

function problems(inventory: Record<string, unknown>): string {
  return configErrorOf(() => loadConfig({ env: {}, overrides: { inventory } })).message;
}

describe('inventory.sites and inventory.allocation', () => {
  it('default to one storefront, shared', () => {
    const { inventory } = loadConfig({ env: {} });
    expect(inventory.sites).toEqual([]);
    expect(inventory.allocation).toBe('shared');
  });

  it('take sites with shares under split, adding up to 1 with decimal fractions', () => {
    const sites = [
      { siteId: 1, share: 0.7 },
      { siteId: 2, share: 0.2, max: 50 },
      { siteId: 3, share: 0.1, safetyStock: 2 },
    ];
    const { inventory } = loadConfig({ env: {}, overrides: { inventory: { sites, allocation: 'split' } } });
    expect(inventory.sites).toEqual([
      { siteId: 1, share: 0.7, safetyStock: 0 },
      { siteId: 2, share: 0.2, max: 50, safetyStock: 0 },
      { siteId: 3, share: 0.1, safetyStock: 2 },
    ]);
  });

  it('refuses shares over 1, naming them', () => {
    expect(problems({ allocation: 'split', sites: [{ siteId: 1, share: 0.7 }, { siteId: 2, share: 0.5 }] })).toMatch(/expected shares adding up to at most 1 \(they add up to 1\.2: site 1: 0\.7, site 2: 0\.5\)/);
  });

  it('refuses a site twice, a share without split, split without shares or sites, and a mistyped key', () => {
    expect(problems({ sites: [{ siteId: 1 }, { siteId: 1 }] })).toMatch(/expected each site listed once \(site 1 is listed twice\)/);
    expect(problems({ sites: [{ siteId: 1, share: 0.5 }] })).toMatch(/expected no share unless inventory.allocation is split \(site 1 has one\)/);
    expect(problems({ allocation: 'split', sites: [{ siteId: 1, share: 0.5 }, { siteId: 2 }] })).toMatch(/expected a share for every site under inventory.allocation: split \(site 2 has none\)/);
    expect(problems({ allocation: 'split' })).toMatch(/inventory.allocation: "split" — expected inventory.sites to split the stock among/);
    expect(problems({ sites: [{ siteId: 1, shares: 0.5 }] })).toMatch(/shares/);
    expect(problems({ allocation: 'even' })).toMatch(/allocation/);
  });
});
