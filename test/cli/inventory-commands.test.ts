import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli } from '../../src/cli/program.js';
import { createRedis } from '../../src/queue/connection.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { cli } from '../helpers/cli.js';
import { deleteKeys, listKeys } from '../support/redis.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `cli_${randomUUID().replace(/-/g, '')}`;
const prefix = `test-${randomUUID()}`;
const db = new pg.Client({ connectionString: PG_URL });
const redis = createRedis('redis://127.0.0.1:6379/0');
let sim: Simulator;
let dir: string;
let configFile: string;

/** A config file reading `table`'s snapshot (Code, Stock, Price) against the store at `storeUrl`; `inventory` adds its lines. */
async function writeConfig(file: string, options: { storeUrl: string; prefix: string; table: string; inventory?: string[] }): Promise<void> {
  const lines = [
    'store:',
    `  baseUrl: ${options.storeUrl}`,
    '  username: demo',
    '  password: demo-password',
    'redis:',
    `  prefix: ${options.prefix}`,
    'log:',
    '  level: silent',
    'inventory:',
    ...(options.inventory ?? []),
    '  sources:',
    '    - name: erp',
    '      kind: sql',
    `      url: ${PG_URL}`,
    '      schedule: "0 0 0 1 1 *"',
    '      changes: "SELECT 1 AS cursor"',
    `      snapshot: 'SELECT code AS "Code", stock AS "Stock", price AS "Price" FROM ${options.table}'`,
  ];
  await writeFile(file, lines.join('\n'));
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, items: [{ Code: 'C-1', Stock: 1, Price: 10 }, { Code: 'C-2', Stock: 2, Price: 20 }], sales: 0, users: 0, clients: 0 });
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`CREATE TABLE ${schema}.items AS SELECT * FROM (VALUES ('C-1', 1, 10.00), ('C-2', 5, 20.00), ('C-9', 9, 90.00)) AS t(code, stock, price)`);
  dir = await mkdtemp(join(tmpdir(), 'storesync-cli-inv-'));
  configFile = join(dir, 'config.yaml');
  await writeConfig(configFile, { storeUrl: sim.url, prefix, table: `${schema}.items` });
});

afterAll(async () => {
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await rm(dir, { recursive: true, force: true });
  await sim.close();
});

describe('storesync resync inventory --dry-run on two sites', () => {
  it('counts the differing targets and the SKUs they belong to apart (issue 28, 7)', async () => {
    // Each item on sites 1 and 2; the ERP's C-2 (5) and C-1's price (11 against 10) differ on both sites.
    const sites = await startSimulator({ port: 0, items: [{ Code: 'C-1', Stock: 1, Price: 10 }, { Code: 'C-2', Stock: 2, Price: 20 }], itemsPerSite: [1, 2], sales: 0, users: 0, clients: 0 });
    const table = `${schema}.two_sites`;
    await db.query(`CREATE TABLE ${table} AS SELECT * FROM (VALUES ('C-1', 1, 11.00), ('C-2', 5, 20.00)) AS t(code, stock, price)`);
    const file = join(dir, 'two-sites.yaml');
    await writeConfig(file, { storeUrl: sites.url, prefix: `${prefix}-sites`, table, inventory: ['  sites: [{ siteId: 1 }, { siteId: 2 }]'] });
    try {
      const run = await cli(['--config', file, 'resync', 'inventory', '--dry-run']);
      expect(run.stderr).toBe('');
      // 2 SKUs × 2 sites differ: 4 differences (C-1 Price, C-2 Stock, on each site) in 4 targets of 2 SKUs.
      expect(run.stdout).toContain('Differences: 4 in 4 targets of 2 SKUs; missing on the store: 0');
      const json = JSON.parse((await cli(['--config', file, 'resync', 'inventory', '--dry-run', '--json'])).stdout) as Record<string, unknown>;
      expect(json).toMatchObject({ differences: 4, itemsWithDifferences: 4, skusWithDifferences: 2 });
    } finally {
      await sites.close();
      await deleteKeys(redis, `${prefix}-sites`);
    }
  });
});

describe('storesync resync inventory', () => {
  it('prints the dry-run plan as JSON and writes nothing to Redis', async () => {
    const run = await cli(['--config', configFile, 'resync', 'inventory', '--dry-run', '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ dryRun: true, differences: 1, perField: { Stock: 1 }, missingOnStore: 1, missingSample: ['C-9'], queued: 1 });
    expect(await listKeys(redis, prefix)).toEqual([]);
  });

  it('queues the differences and prints a readable summary', async () => {
    const run = await cli(['--config', configFile, 'resync', 'inventory', '--sku', 'C-1', 'C-2']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Differences: 1 in 1 targets of 1 SKUs; missing on the store: 0');
    expect(run.stdout).toContain('Jobs queued: 1');
    expect(run.stdout).toMatch(/C-2\s+Stock\s+5\s+2/);
    expect(await redis.zcard(`${prefix}:inventory:prioritized`)).toBe(1);
  });

  it('draws a progress bar on stderr when stderr is a terminal', async () => {
    let stderr = '';
    const code = await runCli(['--config', configFile, 'resync', 'inventory', '--dry-run', '--json'], {
      env: {},
      stdout: { write: () => true },
      stderr: Object.assign({ write: (text: string) => (stderr += text) }, { isTTY: true }),
      stopSignal: new AbortController().signal,
    });
    expect(code).toBe(0);
    expect(stderr).toMatch(/\r\[#+\] 100% 3\/3\n$/);
  });

  it('explains one target: --site of a site no record names shows the default target; a --price-list not configured is refused', async () => {
    // C-2's Stock 5 was queued (pending) by the resync above; its default target has it.
    const run = await cli(['--config', configFile, 'inventory', 'explain', 'C-2', '--site', '3', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sku: 'C-2', target: 'C-2', siteId: 3, priceListId: null, erp: [expect.objectContaining({ field: 'Stock', value: 5, pending: true })] });
    const refused = await cli(['--config', configFile, 'inventory', 'explain', 'C-1', '--price-list', 'WHOLESALE']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--price-list.*WHOLESALE.*inventory\.priceLists \(none configured\)/);
  });

  it('exits with the configuration code for an unknown source', async () => {
    const run = await cli(['--config', configFile, 'resync', 'inventory', '--source', 'nope', '--dry-run']);
    expect(run.code).toBe(78);
    expect(run.stderr).toContain('no source named "nope"');
  });
});
