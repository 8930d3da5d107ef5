/** `storesync sources test <kits source>`: the composition rows, the kits they make, a cycle refused, and the rows refused with their reason. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT } from '../../src/cli/program.js';
import type { SourceTestResult } from '../../src/cli/sources-command.js';
import { PG_URL, pgScratch } from '../erp/databases.js';
import { cli } from '../helpers/cli.js';

let pg: Awaited<ReturnType<typeof pgScratch>>;
let dir: string;
let configFile: string;

beforeAll(async () => {
  pg = await pgScratch();
  await pg.db.query(`CREATE TABLE ${pg.schema}.kits (kit text, component text, qty text)`);
  await pg.db.query(`INSERT INTO ${pg.schema}.kits VALUES ('GIFT', 'MUG', '2'), ('GIFT', 'BOX', '1'), ('SIXPACK', 'CAN', '6'), ('GIFT', 'LID', '0'), ('BAG', 'FLOUR', 'half'), ('LOOP-A', 'LOOP-B', '1'), ('LOOP-B', 'LOOP-A', '1')`);
  dir = await mkdtemp(join(tmpdir(), 'storesync-sources-kits-'));
  configFile = join(dir, 'config.yaml');
  const snapshot = `SELECT kit, component, qty AS quantity FROM ${pg.schema}.kits ORDER BY kit, component`;
  await writeFile(configFile, ['log:', '  level: silent', 'inventory:', '  kits:', '    - name: bundles', '      kind: sql', `      url: ${PG_URL}`, '      schedule: "0 0 0 1 1 *"', `      snapshot: ${JSON.stringify(snapshot)}`, ''].join('\n'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await pg?.drop();
});

describe('storesync sources test on a kits source', () => {
  it('shows the kits it read and the rows refused with record, field, value and rule', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'bundles', '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    const [result] = (JSON.parse(run.stdout) as { sources: SourceTestResult[] }).sources;
    expect(result).toMatchObject({ source: 'bundles', flow: 'kits', read: 7, refused: 2, kits: { GIFT: ['1 × BOX', '2 × MUG'], SIXPACK: ['6 × CAN'] }, cycles: [['LOOP-A', 'LOOP-B']] });
    expect(result?.rejects.map(({ record, field, value, rule }) => ({ record, field, value, rule })).sort((a, b) => a.field.localeCompare(b.field))).toEqual([
      { record: 'BAG', field: 'quantity', value: 'half', rule: expect.any(String) },
      { record: expect.any(String), field: 'quantity', value: 0, rule: 'a number above 0' },
    ]);
    const text = await cli(['--config', configFile, 'sources', 'test', 'bundles']);
    expect(text.stdout).toContain('Kits (4):');
    expect(text.stdout).toContain('  cycle LOOP-A → LOOP-B → LOOP-A refused: its kits are not written');
    expect(text.stdout).toContain('  GIFT = 1 × BOX + 2 × MUG');
  });
});
