import { describe, expect, it } from 'vitest';

import { controlJobJsonSchema, controlJobName, parseControlJob } from '../../../src/sync/control/job-data.js';

describe('control job data', () => {
  it('accepts the Add-job form default and every example of its JSON schema', () => {
    const schema = controlJobJsonSchema();
    for (const example of [schema.default, ...(schema.examples as unknown[])]) {
      expect(parseControlJob(example).ok, JSON.stringify(example)).toBe(true);
    }
  });

  it('fills the defaults of a bare reconcile', () => {
    expect(parseControlJob({ action: 'inventory-reconcile' })).toEqual({
      ok: true,
      value: { action: 'inventory-reconcile', skus: [], dryRun: false, force: false, confirmOrphans: false },
    });
  });

  it.each([
    [{}, 'action'],
    [{ action: 'reindex' }, 'action'],
    [{ action: 'inventory-reconcile', skus: [7] }, 'skus[0]'],
    [{ action: 'inventory-reconcile', extra: 1 }, 'extra'],
    [{ action: 'sales-pull', from: '2024-02-30', to: '2024-03-01' }, 'from'],
    [{ action: 'sales-pull', from: '2024-03-02', to: '2024-03-01' }, 'to'],
    [{ action: 'sales-pull', from: '2024-03-01' }, 'to'],
  ])('refuses %j naming %s', (data, field) => {
    const result = parseControlJob(data);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((issue) => issue.field)).toContain(field);
  });

  it('names the field meant by a mistyped one, among the fields of the action asked for (the Add-job form and the resync routes)', () => {
    const reconcile = parseControlJob({ action: 'inventory-reconcile', dryrun: true, skus: ['A'] });
    expect(reconcile).toEqual({ ok: false, issues: [{ field: 'dryrun', value: true, rule: 'not a known field (did you mean "dryRun"?)' }] });
    const pull = parseControlJob({ action: 'sales-pull', form: '2024-01-01', to: '2024-01-02' });
    expect(pull.ok === false && pull.issues).toContainEqual({ field: 'form', value: '2024-01-01', rule: 'not a known field (did you mean "from"?)' });
    // force is a reconcile field, not a sales-pull one: no guess from the other action's fields.
    const other = parseControlJob({ action: 'sales-pull', from: '2024-01-01', to: '2024-01-02', forse: true });
    expect(other.ok === false && other.issues).toEqual([{ field: 'forse', value: true, rule: 'not a known field' }]);
  });

  it('names jobs after what they do', () => {
    const base = { skus: [] as string[], dryRun: false, force: false, confirmOrphans: false };
    expect(controlJobName({ action: 'inventory-reconcile', ...base })).toBe('reconcile');
    expect(controlJobName({ action: 'inventory-reconcile', ...base, dryRun: true })).toBe('reconcile:dry-run');
    expect(controlJobName({ action: 'inventory-reconcile', ...base, confirmOrphans: true })).toBe('reconcile:confirm-orphans');
    expect(controlJobName({ action: 'inventory-reconcile', ...base, source: 'erp' })).toBe('reconcile:source=erp');
    expect(controlJobName({ action: 'inventory-reconcile', ...base, skus: ['A', 'B', 'C', 'D', 'E', 'F', 'G'] })).toBe('reconcile:A,B,C,D,E,+2');
    expect(controlJobName({ action: 'sales-pull', from: '2024-01-01', to: '2024-01-31', dryRun: false })).toBe('sales-pull:2024-01-01..2024-01-31');
  });
});
