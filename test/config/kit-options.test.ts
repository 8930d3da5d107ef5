import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { configErrorOf } from '../support/config-error.js';

function problems(inventory: Record<string, unknown>): string {
  return configErrorOf(() => loadConfig({ env: {}, overrides: { inventory } })).message;
}

const kits = { name: 'bundles', kind: 'sql', url: 'postgres://erp@db/erp', schedule: '0 */10 * * * *', snapshot: 'SELECT kit, component, quantity FROM bundles' };

describe('inventory.kits', () => {
  it('defaults to no kits, and takes a source with a snapshot and a schedule', () => {
    expect(loadConfig({ env: {} }).inventory.kits).toEqual([]);
    expect(loadConfig({ env: {}, overrides: { inventory: { kits: [kits] } } }).inventory.kits).toMatchObject([{ name: 'bundles', kind: 'sql', enabled: true }]);
  });

  it('refuses a kits source without its snapshot or schedule, naming the key', () => {
    expect(problems({ kits: [{ ...kits, snapshot: undefined }] })).toMatch(/kits source bundles: snapshot is required/);
    expect(problems({ kits: [{ name: 'drop', kind: 'csv', dir: '/tmp/kits', schedule: '0 * * * * *' }] })).toMatch(/kits source drop: snapshotFile is required/);
    expect(problems({ kits: [{ ...kits, schedule: undefined }] })).toMatch(/kits source bundles: schedule is required/);
  });

  it('refuses the change-polling options a kits source never uses, and a name another source has', () => {
    expect(problems({ kits: [{ ...kits, changes: 'SELECT 1' }] })).toMatch(/kits source bundles: changes is not used by a kits source/);
    expect(problems({ kits: [{ ...kits, diff: { schedule: '0 * * * * *' } }] })).toMatch(/kits source bundles: diff is not used/);
    const stock = { name: 'bundles', kind: 'sql', url: 'postgres://erp@db/erp', schedule: '0 * * * * *', changes: 'SELECT 1' };
    expect(problems({ sources: [stock], kits: [kits] })).toMatch(/kits source bundles: the name is already taken/);
    // Two kits sources of one name: the second is refused.
    expect(problems({ kits: [kits, { ...kits, snapshot: 'SELECT kit, component, quantity FROM packs' }] })).toMatch(/^inventory\.kits\[1\]\.name: "bundles" — expected kits source bundles: the name is already taken/);
  });
});
