import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { configErrorOf } from '../support/config-error.js';

const KITS_SOURCE = { name: 'bundles', kind: 'sql', url: 'postgres://erp@erp-db/erp', snapshot: 'SELECT kit, component, quantity FROM bundles', schedule: '0 * * * * *' };

describe('sales.kits', () => {
  it('exports kit lines as sold by default', () => {
    expect(loadConfig({ env: {} }).sales.kits).toEqual({ export: 'kit' });
  });

  it('exports them as components when asked, with a kits source to explode them with', () => {
    const config = loadConfig({ env: {}, overrides: { inventory: { kits: [KITS_SOURCE] }, sales: { kits: { export: 'components' } } } });
    expect(config.sales.kits.export).toBe('components');
  });

  it('refuses components without any inventory.kits source, and a mistyped mode, naming the key', () => {
    expect(configErrorOf(() => loadConfig({ env: {}, overrides: { sales: { kits: { export: 'components' } } } })).message).toMatch(
      /sales\.kits\.export: "components" — expected an inventory\.kits source to read the compositions the kit lines are exploded with \(or export: kit\)/,
    );
    expect(configErrorOf(() => loadConfig({ env: {}, overrides: { sales: { kits: { export: 'bundle' } } } })).message).toMatch(/sales\.kits\.export: "bundle"/);
  });
});
