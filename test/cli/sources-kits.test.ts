/**
 * `storesync sources test <kits source>`: the composition rows, the kits they make, a cycle refused, and
 * the rows refused with their reason; for a kits source with a `changes` query, what that query returns
 * (from the start, or from the cursor its polls stored in Redis), a kit left without rows shown as such.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT } from '../../src/cli/program.js';
import type { SourceTestResult } from '../../src/cli/sources-command.js';
import { createRedis } from '../../src/queue/connection.js';
import { SourceCursors } from '../../src/sync/drain-source.js';
import { PG_URL, pgScratch } from '../erp/databases.js';
import { cli } from '../helpers/cli.js';
import { deleteKeys, dumpPrefix } from '../support/redis.js';

const redis = createRedis('redis://127.0.0.1:6379/0');
const prefix = `test-sources-kits-${process.pid}-${Date.now()}`;

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
  await pg.db.query(`CREATE TABLE ${pg.schema}.bundle (kit text PRIMARY KEY, disabled boolean NOT NULL, modified timestamp(6) NOT NULL)`);
  await pg.db.query(`CREATE TABLE ${pg.schema}.bundle_item (kit text, component text, qty numeric)`);
  await pg.db.query(`INSERT INTO ${pg.schema}.bundle VALUES ('GIFT', false, '2026-01-05 10:00:00'), ('OLD', true, '2026-01-05 10:01:00'), ('DUO', false, '2026-01-05 10:02:00')`);
  await pg.db.query(`INSERT INTO ${pg.schema}.bundle_item VALUES ('GIFT', 'MUG', 2), ('GIFT', 'BOX', 1), ('OLD', 'MUG', 1), ('DUO', 'CAN', 1), ('DUO', 'LID', 0)`);
  const changes = `SELECT b.kit, i.component, i.qty AS quantity, b.modified AS cursor FROM ${pg.schema}.bundle b LEFT JOIN ${pg.schema}.bundle_item i ON i.kit = b.kit AND NOT b.disabled
    WHERE CAST(:cursor AS timestamp) IS NULL OR b.modified >= :cursor ORDER BY b.modified, b.kit, i.component LIMIT :limit`;
  // A kit whose change rows name a component without a quantity: a refused row, not the kit's removal.
  await pg.db.query(`CREATE TABLE ${pg.schema}.partial (kit text, component text, qty numeric, modified timestamp(6) NOT NULL)`);
  await pg.db.query(`INSERT INTO ${pg.schema}.partial VALUES ('HALF', 'BOX', 1, '2026-01-05 10:00:00'), ('HALF', 'MUG', NULL, '2026-01-05 10:00:00')`);
  const partialChanges = `SELECT kit, component, qty AS quantity, modified AS cursor FROM ${pg.schema}.partial
    WHERE CAST(:cursor AS timestamp) IS NULL OR modified >= :cursor ORDER BY modified, kit, component LIMIT :limit`;
  const bundleSnapshot = `SELECT b.kit, i.component, i.qty AS quantity FROM ${pg.schema}.bundle b JOIN ${pg.schema}.bundle_item i ON i.kit = b.kit WHERE NOT b.disabled`;
  await writeFile(
    configFile,
    [
      'redis:',
      `  prefix: ${prefix}`,
      'log:',
      '  level: silent',
      'inventory:',
      '  kits:',
      '    - name: bundles',
      '      kind: sql',
      `      url: ${PG_URL}`,
      '      schedule: "0 0 0 1 1 *"',
      `      snapshot: ${JSON.stringify(snapshot)}`,
      '    - name: feed',
      '      kind: sql',
      `      url: ${PG_URL}`,
      '      timeZone: UTC',
      '      schedule: "0 0 0 1 1 *"',
      '      changesSchedule: "0 0 0 1 1 *"',
      `      snapshot: ${JSON.stringify(bundleSnapshot)}`,
      `      changes: ${JSON.stringify(changes)}`,
      '    - name: partial',
      '      kind: sql',
      `      url: ${PG_URL}`,
      '      timeZone: UTC',
      '      schedule: "0 0 0 1 1 *"',
      '      changesSchedule: "0 0 0 1 1 *"',
      `      snapshot: ${JSON.stringify(`SELECT kit, component, qty AS quantity FROM ${pg.schema}.partial`)}`,
      `      changes: ${JSON.stringify(partialChanges)}`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
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

  it('shows what the changes query of a kits source returns: each kit read whole, a disabled one without components, from the stored cursor with --from-cursor', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'feed', '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    const [result] = (JSON.parse(run.stdout) as { sources: SourceTestResult[] }).sources;
    // 5 rows: GIFT's 2, OLD's empty row (disabled), DUO's 2 (its LID row refused: quantity 0).
    expect(result).toMatchObject({ source: 'feed', flow: 'kits', readFrom: 'start', read: 5, refused: 1, kits: { GIFT: ['1 × BOX', '2 × MUG'], OLD: [], DUO: ['1 × CAN'] }, cursor: '2026-01-05T10:02:00.000Z' });
    expect(result?.rejects.map(({ record, field, value, rule }) => [record, field, value, rule])).toEqual([['feed row cursor=2026-01-05T10:02:00.000Z kit=DUO', 'quantity', 0, 'a number above 0']]);
    const text = await cli(['--config', configFile, 'sources', 'test', 'feed']);
    expect(text.stdout).toContain('  OLD = (no components: no longer a kit)');

    // From the cursor the polls stored (state:kit:cursor:feed); nothing written.
    await new SourceCursors(redis, prefix, 'kit').set('feed', '2026-01-05T10:01:00.000Z');
    const before = await dumpPrefix(redis, prefix);
    const stored = await cli(['--config', configFile, 'sources', 'test', 'feed', '--from-cursor', '--json']);
    expect(stored.code).toBe(EXIT.ok);
    const [fromCursor] = (JSON.parse(stored.stdout) as { sources: SourceTestResult[] }).sources;
    // As a poll's first read: from the stored cursor less the overlap (60 s), so GIFT at 10:00 is read again.
    expect(fromCursor).toMatchObject({ readFrom: 'stored', from: '2026-01-05T10:01:00.000Z', read: 5 });
    expect(fromCursor?.kits).toEqual({ GIFT: ['1 × BOX', '2 × MUG'], OLD: [], DUO: ['1 × CAN'] });
    expect(await dumpPrefix(redis, prefix)).toEqual(before);
  });

  it('refuses a change row that names a component without a quantity: only a row with neither is a kit left without components', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'partial', '--json']);
    expect(run.stderr).toBe('');
    const [result] = (JSON.parse(run.stdout) as { sources: SourceTestResult[] }).sources;
    // 2 rows of HALF: BOX × 1, and MUG with no quantity (refused, on its quantity).
    expect(result).toMatchObject({ source: 'partial', flow: 'kits', read: 2, refused: 1 });
    expect(result?.rejects.map(({ record, field }) => [record, field])).toEqual([['partial row cursor=2026-01-05T10:00:00.000Z kit=HALF', 'quantity']]);
  });
});
