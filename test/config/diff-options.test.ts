import { describe, expect, it } from 'vitest';

import { vanishedOptions } from '../../src/config/diff-options.js';
import { loadConfig } from '../../src/config/load.js';
import { configErrorOf } from '../support/config-error.js';

const URL = 'postgres://postgres@127.0.0.1:5432/test';
const sql = { name: 'erp', kind: 'sql', url: URL, snapshot: 'SELECT code, stock FROM items' };

function load(flow: 'inventory' | 'fulfillment', source: Record<string, unknown>) {
  return loadConfig({ env: {}, overrides: { [flow]: { sources: [source] } } });
}

function problems(flow: 'inventory' | 'fulfillment', source: Record<string, unknown>): string {
  return configErrorOf(() => load(flow, source)).message;
}

describe('snapshot diff options', () => {
  it('accepts a source with a snapshot and a diff, and neither changes nor schedule; vanished takes its defaults', () => {
    const config = load('inventory', { ...sql, diff: { schedule: '0 */10 * * * *' } });
    const [source] = config.inventory.sources;
    expect(source).toMatchObject({ diff: { schedule: '0 */10 * * * *' } });
    expect(vanishedOptions(source!)).toEqual({ action: 'zero', maxFraction: 0.05 });
    const unpublish = load('inventory', { ...sql, diff: { schedule: '* * * * *' }, vanished: { action: 'unpublish' } });
    expect(vanishedOptions(unpublish.inventory.sources[0]!)).toEqual({ action: 'unpublish', maxFraction: 0.05 });
  });

  it('refuses a diff without a snapshot, naming what the kind needs', () => {
    expect(problems('inventory', { name: 'erp', kind: 'sql', url: URL, changes: 'SELECT 1', schedule: '* * * * *', diff: { schedule: '* * * * *' } })).toContain(
      'source erp: diff needs a snapshot query',
    );
    expect(problems('inventory', { name: 'drop', kind: 'csv', dir: '/tmp/x', schedule: '* * * * *', diff: { schedule: '* * * * *' } })).toContain('source drop: diff needs a snapshotFile');
  });

  it('still needs changes and schedule without a diff, and no schedule without changes', () => {
    expect(problems('inventory', sql)).toMatch(/source erp: schedule is required[\s\S]*source erp: changes is required/);
    expect(problems('inventory', { ...sql, schedule: '* * * * *', diff: { schedule: '* * * * *' } })).toContain('diff.schedule is this source');
  });

  it('refuses diff, vanished and deletions on a fulfillment source, and a wrong action or fraction', () => {
    const text = problems('fulfillment', { ...sql, changes: 'SELECT 1', schedule: '* * * * *', diff: { schedule: '* * * * *' }, deletions: 'SELECT 1' });
    expect(text).toContain('source erp: diff is an inventory source option');
    expect(text).toContain('source erp: deletions is an inventory source option');
    expect(problems('inventory', { ...sql, diff: { schedule: '* * * * *' }, vanished: { action: 'delete' } })).toContain('vanished.action');
    expect(problems('inventory', { ...sql, diff: { schedule: '* * * * *' }, vanished: { maxFraction: 2 } })).toContain('vanished.maxFraction');
  });

  it('names a mistyped key inside diff', () => {
    expect(problems('inventory', { ...sql, diff: { schedul: '* * * * *' } })).toMatch(/schedul/);
  });
});
