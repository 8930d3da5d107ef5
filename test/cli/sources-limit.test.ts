/**
 * `storesync sources test NAME --limit N` prints at most N records, even from a query without `:afterKey`
 * that reads more to get past rows sharing one cursor; and counts every refused row (issue 22).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT } from '../../src/cli/program.js';
import type { SourceTestResult } from '../../src/cli/sources-command.js';
import { mariaScratch } from '../erp/databases.js';
import { createErpnextShape, ERPNEXT_CHANGES_QUERY_WITHOUT_AFTER_KEY, insertErpnextBins, upsertErpnextBin } from '../erp/erp-shapes.js';
import { cli } from '../helpers/cli.js';
import { testPrefix } from '../ops/helpers.js';

let maria: Awaited<ReturnType<typeof mariaScratch>>;
let dir: string;
let configFile: string;

beforeAll(async () => {
  maria = await mariaScratch();
  await createErpnextShape(maria.db);
  // Six bins under one time (a bulk load), then one sold by the kg.
  await insertErpnextBins(maria.db, { count: 6, actualQty: '2.000000000', modified: '2024-05-01 12:00:00.500000' });
  await upsertErpnextBin(maria.db, 'KG-1', '5.500000000', '2024-05-01 12:00:01.000000');
  dir = await mkdtemp(join(tmpdir(), 'storesync-sources-limit-'));
  configFile = join(dir, 'config.yaml');
  const source = {
    name: 'erpnext',
    kind: 'sql',
    url: maria.url,
    schedule: '0 0 0 1 1 *',
    timeZone: 'Europe/Madrid',
    stockRounding: 'reject',
    changes: ERPNEXT_CHANGES_QUERY_WITHOUT_AFTER_KEY,
  };
  const lines = ['redis:', `  prefix: ${testPrefix()}`, 'log:', '  level: silent', 'inventory:', '  sources:'];
  lines.push(...Object.entries(source).map(([key, value], index) => `${index === 0 ? '    - ' : '      '}${key}: ${JSON.stringify(value)}`));
  await writeFile(configFile, `${lines.join('\n')}\n`);
});

afterAll(async () => {
  await maria.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('storesync sources test --limit', () => {
  it('prints at most N records though the query read more to get past a shared cursor', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'erpnext', '--limit', '2', '--json']);
    expect(run.code).toBe(EXIT.ok);
    const [result] = (JSON.parse(run.stdout) as { sources: SourceTestResult[] }).sources;
    expect(result?.records).toHaveLength(2);
    // 2 rows sharing a cursor fill the limit: the read asked for 4, then 8, and got all 7.
    expect(result).toMatchObject({ read: 7, refused: 1, cursor: '2024-05-01T10:00:01.000Z' });

    const text = await cli(['--config', configFile, 'sources', 'test', 'erpnext', '--limit', '2']);
    expect(text.stdout).toContain('Records (2):  (7 rows read, at most 2 shown)');
  });

  it('counts a row whose Stock alone was refused (stockRounding: reject) and still shows its other fields', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'erpnext', '--json']);
    const [result] = (JSON.parse(run.stdout) as { sources: SourceTestResult[] }).sources;
    expect(result?.refused).toBe(1);
    expect(result?.rejects).toEqual([
      { ref: 'erpnext row cursor=2024-05-01T10:00:01.000Z Code=KG-1', record: 'KG-1', field: 'Stock', value: '5.500000000', rule: 'whole number (stockRounding: reject)' },
    ]);
    expect(result?.records.find((record) => record.fields.Code === 'KG-1')?.fields).toEqual({ Code: 'KG-1' });
  });
});
