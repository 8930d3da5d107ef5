import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'storesync-status-texts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(text: string): string {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('store.statusTexts', () => {
  it("defaults to the spec's States table", () => {
    expect(loadConfig({ env: {} }).store.statusTexts).toEqual({
      '0': 'Pending',
      '1': 'Confirmed',
      '2': 'In process',
      '3': 'Completed',
      '6': 'Delivered',
      '-1': 'Rejected',
      '-2': 'Cancelled',
    });
  });

  it('adds the entries of a config file to the defaults, or replaces the text of a status', () => {
    const config = loadConfig({ env: {}, configFile: configFile('store:\n  statusTexts:\n    7: Retirado en sucursal\n    -2: Cancelada\n') });
    expect(config.store.statusTexts).toMatchObject({ '7': 'Retirado en sucursal', '-2': 'Cancelada', '3': 'Completed' });
  });

  it('refuses a key that is not a status and an empty text', () => {
    const problems = problemsOf(() => loadConfig({ env: {}, overrides: { store: { statusTexts: { shipped: 'Shipped', 4: ' ' } } } }));
    expect(problems.join('\n')).toMatch(/store\.statusTexts\.shipped.*a sale status \(an integer\) as key/);
    expect(problems.join('\n')).toMatch(/store\.statusTexts\.4.*a non-empty text/);
  });

  it('refuses a status storesync may write without a text: an extra fulfillment status, the ack status', () => {
    const problems = problemsOf(() => loadConfig({ env: {}, overrides: { fulfillment: { statuses: [1, 3, 7] }, sales: { ack: { status: 5 } } } }));
    expect(problems).toContainEqual(expect.stringMatching(/^fulfillment\.statuses\[2\].*status 7 has no text: add it to store\.statusTexts/));
    expect(problems).toContainEqual(expect.stringMatching(/^sales\.ack\.status.*status 5 has no text/));
    // An explicit ack text is enough for the ack status.
    expect(loadConfig({ env: {}, overrides: { sales: { ack: { status: 5, statusText: 'Tomada' } } } }).sales.ack.statusText).toBe('Tomada');
  });
});
