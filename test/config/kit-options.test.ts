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
    expect(problems({ kits: [{ ...kits, diff: { schedule: '0 * * * * *' } }] })).toMatch(/kits source bundles: diff is not used/);
    const stock = { name: 'bundles', kind: 'sql', url: 'postgres://erp@db/erp', schedule: '0 * * * * *', changes: 'SELECT 1' };
    expect(problems({ sources: [stock], kits: [kits] })).toMatch(/kits source bundles: the name is already taken/);
    // Two kits sources of one name: the second is refused.
    expect(problems({ kits: [kits, { ...kits, snapshot: 'SELECT kit, component, quantity FROM packs' }] })).toMatch(/^inventory\.kits\[1\]\.name: "bundles" — expected kits source bundles: the name is already taken/);
  });

  it('takes a changes query on a sql kits source, polled on changesSchedule or else on the inventory sources\' schedule', () => {
    const changes = 'SELECT kit, component, quantity, modified AS cursor FROM bundles WHERE modified >= :cursor ORDER BY modified, kit LIMIT :limit';
    const stock = { name: 'erp', kind: 'sql', url: 'postgres://erp@db/erp', schedule: '*/30 * * * * *', changes: 'SELECT 1' };
    const own = loadConfig({ env: {}, overrides: { inventory: { kits: [{ ...kits, changes, changesSchedule: '*/15 * * * * *' }] } } }).inventory.kits[0];
    expect(own).toMatchObject({ changes, changesSchedule: '*/15 * * * * *' });
    expect(loadConfig({ env: {}, overrides: { inventory: { sources: [stock], kits: [{ ...kits, changes }] } } }).inventory.kits[0]).toMatchObject({ changes });
    // Nothing to poll it on: no changesSchedule, no inventory source with a schedule.
    expect(problems({ kits: [{ ...kits, changes }] })).toMatch(/^inventory\.kits\[0\]\.changesSchedule: .*kits source bundles: changesSchedule is required with changes when no inventory source has a schedule/m);
    // A disabled inventory source is never polled: its schedule would never poll the kits changes either.
    expect(problems({ sources: [{ ...stock, enabled: false }], kits: [{ ...kits, changes }] })).toMatch(
      /^inventory\.kits\[0\]\.changesSchedule: .*kits source bundles: changesSchedule is required with changes when no inventory source has a schedule/m,
    );
    expect(loadConfig({ env: {}, overrides: { inventory: { sources: [{ ...stock, enabled: false }], kits: [{ ...kits, changes, changesSchedule: '*/15 * * * * *' }] } } }).inventory.kits[0]).toMatchObject({ changes });
    expect(problems({ kits: [{ ...kits, changesSchedule: '*/15 * * * * *' }] })).toMatch(/kits source bundles: changesSchedule polls the changes query, and there is none/);
  });

  it('refuses changes on a csv or http kits source, and a kits changes query paging by :afterKey, naming the field and the rule', () => {
    const csv = { name: 'drop', kind: 'csv', dir: '/tmp/kits', schedule: '0 * * * * *', snapshotFile: '/tmp/kits/all.csv', changes: 'SELECT 1' };
    expect(problems({ kits: [csv] })).toMatch(/^inventory\.kits\[0\]\.changes: .*kits source drop: changes is a query of a sql kits source; a csv kits source is read whole from its snapshotFile on its schedule/m);
    const http = { name: 'api', kind: 'http', url: 'http://erp/kits', schedule: '0 * * * * *', snapshotUrl: 'http://erp/kits/all', changes: 'x' };
    expect(problems({ kits: [http] })).toMatch(/kits source api: changes is a query of a sql kits source; a http kits source is read whole from its snapshotUrl/);
    const paged = 'SELECT kit, component, quantity, modified AS cursor FROM bundles WHERE (modified, kit) > (:cursor, :afterKey) LIMIT :limit';
    expect(problems({ kits: [{ ...kits, changes: paged, changesSchedule: '* * * * * *' }] })).toMatch(/kits source bundles: the changes query of a kits source must not use :afterKey/);
    // changesSchedule is a kits source's own: an inventory source does not take it.
    const stock = { name: 'erp', kind: 'sql', url: 'postgres://erp@db/erp', schedule: '*/30 * * * * *', changes: 'SELECT 1', changesSchedule: '* * * * * *' };
    expect(problems({ sources: [stock] })).toMatch(/inventory\.sources\[0\]\.changesSchedule/);
  });
});
