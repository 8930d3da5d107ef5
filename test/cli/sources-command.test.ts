import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT } from '../../src/cli/program.js';
import type { SourceTestResult } from '../../src/cli/sources-command.js';
import { createRedis } from '../../src/queue/connection.js';
import { sparePort } from '../../src/queue/redis-server.js';
import { SourceCursors } from '../../src/sync/drain-source.js';
import { mariaScratch, PG_URL, pgScratch } from '../erp/databases.js';
import { cli } from '../helpers/cli.js';
import { testPrefix } from '../ops/helpers.js';
import { deleteKeys, dumpPrefix } from '../support/redis.js';

const redis = createRedis('redis://127.0.0.1:6379/0');
const prefix = testPrefix();
const T1 = new Date('2024-05-01T10:00:01.000Z');
const T2 = new Date('2024-05-01T10:00:02.000Z');
const T3 = new Date('2024-05-01T10:00:03.000Z');

let pg: Awaited<ReturnType<typeof pgScratch>>;
let maria: Awaited<ReturnType<typeof mariaScratch>>;
let dir: string;
let dropDir: string;
let erpServer: Server;
let erpUrl: string;
let configFile: string;

/** The config file's lines for one source, indented under `sources:`. */
function sourceYaml(fields: Record<string, unknown>): string[] {
  return Object.entries(fields).map(([key, value], index) => `${index === 0 ? '    - ' : '      '}${key}: ${JSON.stringify(value)}`);
}

async function writeConfig(name: string, inventory: Array<Record<string, unknown>>, fulfillment: Array<Record<string, unknown>> = []): Promise<string> {
  const file = join(dir, name);
  const lines = ['redis:', `  prefix: ${prefix}`, 'log:', '  level: silent', 'inventory:', '  sources:', ...inventory.flatMap(sourceYaml)];
  if (fulfillment.length > 0) lines.push('fulfillment:', '  sources:', ...fulfillment.flatMap(sourceYaml));
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

const schedule = '0 0 0 1 1 *';

function pgStock(): Record<string, unknown> {
  return {
    name: 'pg-stock',
    kind: 'sql',
    url: PG_URL,
    schedule,
    overlapMs: 0,
    changes: `SELECT code, stock, price, changed_at AS cursor FROM ${pg.schema}.items
              WHERE changed_at >= COALESCE(CAST(:cursor AS timestamptz), '-infinity') ORDER BY cursor, code LIMIT :limit`,
  };
}

function mariaShipments(): Record<string, unknown> {
  return {
    name: 'maria-ship',
    kind: 'sql',
    url: maria.url,
    schedule,
    changes:
      'SELECT sale_id AS SaleId, status AS Status, tracking AS TrackingCode, changed_at AS `cursor` FROM shipments ' +
      'WHERE (:cursor IS NULL OR changed_at >= :cursor) ORDER BY changed_at, tracking LIMIT :limit',
  };
}

beforeAll(async () => {
  pg = await pgScratch();
  await pg.db.query(`CREATE TABLE ${pg.schema}.items (code text PRIMARY KEY, stock text NOT NULL, price numeric(10,2) NOT NULL, changed_at timestamptz NOT NULL)`);
  for (const [code, stock, changedAt] of [['SKU-1', '3', T1], ['SKU-2', '-5', T2], ['SKU-3', 'lots', T3]] as const) {
    await pg.db.query(`INSERT INTO ${pg.schema}.items VALUES (:code, :stock, 10.50, :changedAt)`, { code, stock, changedAt });
  }
  maria = await mariaScratch();
  await maria.db.query('CREATE TABLE shipments (sale_id INT NULL, status INT NOT NULL, tracking VARCHAR(30) NOT NULL, changed_at DATETIME(3) NOT NULL)');
  await maria.db.query('INSERT INTO shipments VALUES (101, 3, :tracking, :changedAt)', { tracking: 'TRK-1', changedAt: T1 });
  await maria.db.query('INSERT INTO shipments VALUES (NULL, 3, :tracking, :changedAt)', { tracking: 'TRK-2', changedAt: T2 });

  dir = await mkdtemp(join(tmpdir(), 'storesync-sources-test-'));
  dropDir = join(dir, 'drop');
  await mkdir(dropDir);
  await writeFile(join(dropDir, 'stock.csv'), 'Code;Stock\nC-1;4\nC-2;x\n');

  // The ERP's own HTTP endpoint (ours to fake): records with cursor >= since, in cursor order.
  erpServer = createServer((req, res) => {
    const since = new URL(req.url ?? '/', 'http://erp').searchParams.get('since');
    const items = [{ code: 'H-1', stock: 7, cursor: T1.toISOString() }].filter((item) => since === null || item.cursor >= since);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items }));
  });
  await new Promise<void>((resolve) => erpServer.listen(0, '127.0.0.1', resolve));
  erpUrl = `http://127.0.0.1:${(erpServer.address() as AddressInfo).port}/changes`;

  configFile = await writeConfig(
    'config.yaml',
    [pgStock(), { name: 'csv-drop', kind: 'csv', dir: dropDir, schedule, settleMs: 0 }, { name: 'http-erp', kind: 'http', url: erpUrl, schedule }],
    [mariaShipments()],
  );
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await pg.drop();
  await maria.drop();
  await new Promise((resolve) => erpServer.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function parse(stdout: string): Map<string, SourceTestResult> {
  const { sources } = JSON.parse(stdout) as { sources: SourceTestResult[] };
  return new Map(sources.map((result) => [result.source, result]));
}

describe('storesync sources test', () => {
  it('reads every inventory and fulfillment source from the start, sorts records from rejects, and writes nothing', async () => {
    // A stored cursor the command must neither use (no --from-cursor) nor move.
    await new SourceCursors(redis, prefix, 'inv').set('pg-stock', T1.toISOString());
    const before = await dumpPrefix(redis, prefix);
    expect(before.size).toBe(1);

    const run = await cli(['--config', configFile, 'sources', 'test', '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    const results = parse(run.stdout);
    expect([...results.keys()]).toEqual(['pg-stock', 'csv-drop', 'http-erp', 'maria-ship']);

    const stock = results.get('pg-stock');
    expect(stock).toMatchObject({ kind: 'sql', flow: 'inventory', readFrom: 'start', from: null, cursor: T3.toISOString() });
    expect(stock?.records.map((record) => record.fields)).toEqual([{ Code: 'SKU-1', Stock: 3, Price: 10.5 }]);
    // The source's own rejects (a value that is no integer) come first, then the store's rules.
    expect(stock?.rejects.map(({ record, field, value, rule }) => ({ record, field, value, rule }))).toEqual([
      { record: 'SKU-3', field: 'Stock', value: 'lots', rule: 'integer' },
      { record: 'SKU-2', field: 'Stock', value: -5, rule: 'integer 0 to 999999' },
    ]);

    const csv = results.get('csv-drop');
    expect(csv?.records.map((record) => record.fields)).toEqual([{ Code: 'C-1', Stock: 4 }]);
    expect(csv?.rejects).toEqual([expect.objectContaining({ record: 'C-2', field: 'Stock', value: 'x' })]);
    expect(typeof csv?.cursor).toBe('string');

    expect(results.get('http-erp')).toMatchObject({ kind: 'http', records: [{ fields: { Code: 'H-1', Stock: 7 } }], rejects: [], cursor: T1.toISOString() });

    const shipments = results.get('maria-ship');
    expect(shipments).toMatchObject({ flow: 'fulfillment', cursor: T2.toISOString() });
    expect(shipments?.records.map((record) => record.fields)).toEqual([{ SaleId: 101, Status: 3, TrackingCode: 'TRK-1' }]);
    expect(shipments?.rejects).toEqual([expect.objectContaining({ field: 'SaleId', rule: 'a sale id, or ExternalReference (+ SiteId)' })]);

    // Nothing written: the Redis prefix is as it was, and the CSV file is still in the drop folder.
    expect(await dumpPrefix(redis, prefix)).toEqual(before);
    expect(await readdir(dropDir)).toEqual(['stock.csv']);
  });

  it('starts from the cursor stored in Redis with --from-cursor, and leaves it where it was', async () => {
    await new SourceCursors(redis, prefix, 'inv').set('pg-stock', T2.toISOString());
    const before = await dumpPrefix(redis, prefix);

    const run = await cli(['--config', configFile, 'sources', 'test', 'pg-stock', '--from-cursor', '--json']);
    expect(run.code).toBe(EXIT.ok);
    const stock = parse(run.stdout).get('pg-stock');
    expect(stock).toMatchObject({ readFrom: 'stored', from: T2.toISOString(), records: [], cursor: T3.toISOString() });
    expect(stock?.rejects.map((reject) => reject.record)).toEqual(['SKU-3', 'SKU-2']);
    expect(await dumpPrefix(redis, prefix)).toEqual(before);
  });

  it('reads from the start with --from-cursor when the source has no stored cursor', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'maria-ship', '--from-cursor', '--json']);
    expect(run.code).toBe(EXIT.ok);
    expect(parse(run.stdout).get('maria-ship')).toMatchObject({ readFrom: 'start', from: null, cursor: T2.toISOString() });
  });

  it('prints a readable table with the rejects and the cursor, and honours --limit', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'pg-stock', '--limit', '2']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('pg-stock (sql, inventory): one batch of at most 2, from the start');
    expect(run.stdout).toMatch(/Records \(1\):\nCode\s+Stock\s+Price\s+cursor\n[- ]+\nSKU-1\s+3\s+10\.5\s+2024-05-01T10:00:01\.000Z\n/);
    expect(run.stdout).toMatch(/Rejected \(1\):\nrecord\s+field\s+value\s+rule\n[- ]+\nSKU-2\s+Stock\s+-5\s+integer 0 to 999999\n/);
    expect(run.stdout).toContain(`Cursor it would store: "${T2.toISOString()}"  (nothing was written)`);

    const all = await cli(['--config', configFile, 'sources', 'test', 'pg-stock']);
    expect(all.stdout).toMatch(/Rejected \(2\):\nrecord\s+field\s+value\s+rule\n[- ]+\nSKU-3\s+Stock\s+"lots"\s+integer\nSKU-2\s+Stock\s+-5/);
  });

  it('says which CSV files it left for the next poll because they changed less than settleMs ago (issue 28, 6c)', async () => {
    const fresh = join(dir, 'settling');
    await mkdir(fresh);
    await writeFile(join(fresh, 'old.csv'), 'Code;Stock\nS-1;2\n');
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(join(fresh, 'old.csv'), hourAgo, hourAgo);
    await writeFile(join(fresh, 'new.csv'), 'Code;Stock\nS-2;5\n');
    const file = await writeConfig('settling.yaml', [{ name: 'csv-settling', kind: 'csv', dir: fresh, schedule, settleMs: 600_000 }]);

    const run = await cli(['--config', file, 'sources', 'test', '--json']);
    expect(run.code).toBe(EXIT.ok);
    const result = parse(run.stdout).get('csv-settling');
    expect(result?.records.map((record) => record.fields)).toEqual([{ Code: 'S-1', Stock: 2 }]);
    expect(result?.unsettled).toEqual([{ file: 'new.csv', ageMs: expect.any(Number) as unknown as number, settleMs: 600_000 }]);
    const ageMs = result?.unsettled[0]?.ageMs ?? -1;
    expect(ageMs >= 0 && ageMs < 600_000, `age ${ageMs} ms of a file just written`).toBe(true);

    const text = await cli(['--config', file, 'sources', 'test']);
    expect(text.stdout).toMatch(/\n {2}Left for the next poll: new\.csv changed \d+ ms ago, less than settleMs \(600000 ms\): it may still be written\.\n/);
    expect(text.stdout).not.toContain('old.csv changed');
    expect((await readdir(fresh)).sort()).toEqual(['new.csv', 'old.csv']);
  });

  it('points at the null cursor when a source reads nothing from the start, with the warning on stderr', async () => {
    const bad = await writeConfig('first-poll.yaml', [
      { ...pgStock(), name: 'pg-bad', changes: `SELECT code, stock, changed_at AS cursor FROM ${pg.schema}.items WHERE changed_at > :cursor ORDER BY cursor, code LIMIT :limit` },
    ]);
    const run = await cli(['--config', bad, '--log-level', 'warn', 'sources', 'test']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('Nothing read from the start');
    expect(run.stdout).toContain('Cursor it would store: (none)');
    const warnings = run.stderr.split('\n').filter((line) => line.includes('the first poll (no stored cursor, no initialCursor) read no rows'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("COALESCE(CAST(:cursor AS timestamp), '-infinity')");
  });

  it('starts where the first poll would with an initialCursor, and says so', async () => {
    const file = await writeConfig('initial.yaml', [{ ...pgStock(), initialCursor: T2.toISOString() }]);
    const run = await cli(['--config', file, 'sources', 'test', 'pg-stock']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain(`pg-stock (sql, inventory): one batch of at most 1000, from the initialCursor ${T2.toISOString()}`);
    expect(run.stdout).toContain('Records (0):');
    expect(run.stdout).toContain('Rejected (2):');
  });

  it('says so when no source is configured', async () => {
    const file = join(dir, 'none.yaml');
    await writeFile(file, 'log:\n  level: silent\n');
    const run = await cli(['--config', file, 'sources', 'test']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toBe('No inventory or fulfillment source is configured (inventory.sources, fulfillment.sources).\n');
  });

  it('exits 2 naming the configured sources when NAME is not one of them', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', 'pg-stokc']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('no source named "pg-stokc" (configured: pg-stock, csv-drop, http-erp, maria-ship)');
    expect(run.stdout).toBe('');
  });

  it('refuses a --limit that is not a positive integer, naming the option', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', '--limit', '0']);
    expect(run.code).toBe(EXIT.validation);
    expect(run.stderr).toContain('--limit');
    expect(run.stdout).toBe('');
  });

  it('refuses --limit abc without saying "nothing sent": the command never sends anything (issue 28, 7)', async () => {
    const run = await cli(['--config', configFile, 'sources', 'test', '--limit', 'abc']);
    expect(run.code).toBe(EXIT.validation);
    expect(run.stderr).toBe('storesync: sources test: field --limit = "abc" breaks "positive integer"\n');
    expect(run.stdout).toBe('');
  });

  it('exits 1 when a source cannot be read, after printing the sources that could', async () => {
    const broken = await writeConfig('broken.yaml', [
      pgStock(),
      { name: 'missing-table', kind: 'sql', url: maria.url, schedule, changes: 'SELECT * FROM no_such_table WHERE :cursor IS NULL LIMIT :limit' },
    ]);
    const run = await cli(['--config', broken, 'sources', 'test', '--json']);
    expect(run.code).toBe(EXIT.remote);
    const results = parse(run.stdout);
    expect(results.get('pg-stock')?.records).toHaveLength(1);
    expect(results.get('missing-table')?.error).toMatchObject({ code: 'ERR_ERP_SCHEMA', message: expect.stringContaining('no_such_table') as unknown as string });
    expect(run.stderr).toMatch(/^storesync: ERR_ERP_SCHEMA: .*missing-table.*no_such_table/);
  });

  it('exits 1 with one clear line when --from-cursor cannot reach Redis', async () => {
    const file = join(dir, 'dead-redis.yaml');
    await writeFile(file, `redis:\n  url: redis://127.0.0.1:${await sparePort()}/0\n  prefix: ${prefix}\nlog:\n  level: silent\ninventory:\n  sources:\n${sourceYaml(pgStock()).join('\n')}\n`);
    const run = await cli(['--config', file, 'sources', 'test', '--from-cursor']);
    expect(run.code).toBe(EXIT.remote);
    expect(run.stderr).toMatch(/^storesync: ERR_REDIS: --from-cursor: cannot read the stored cursors, Redis at redis:\/\/127\.0\.0\.1:\d+\/0 does not answer \(.*ECONNREFUSED.*\)\n$/);
    expect(run.stdout).toBe('');
  });

  it('exits 78 when a source is misconfigured', async () => {
    const bad = await writeConfig('bad-mapping.yaml', [{ ...pgStock(), mapping: { stock: 'Stok' } }]);
    const run = await cli(['--config', bad, 'sources', 'test']);
    expect(run.code).toBe(EXIT.config);
    expect(run.stderr).toContain('mapping target "Stok" is not a field');
    expect(existsSync(join(dropDir, 'processed'))).toBe(false);
  });
});
