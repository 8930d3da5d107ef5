import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { openSql, type SqlClient } from '../../src/erp/sql-client.js';
import { createRedis } from '../../src/queue/connection.js';
import { formatStoreDate } from '../../src/simulator/clock.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { cli } from '../helpers/cli.js';
import { deleteKeys } from '../support/redis.js';

const TIME_ZONE = 'America/Argentina/Buenos_Aires';
const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const MARIADB_URL = 'mysql://root@127.0.0.1:3306/test';

describe('storesync migrate', () => {
  let dir: string;
  let admin: { pg: SqlClient; mysql: SqlClient };
  const drops: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storesync-migrate-'));
    admin = { pg: openSql(PG_URL), mysql: openSql(MARIADB_URL) };
  });

  afterEach(async () => {
    for (const drop of drops.splice(0)) await (drop.startsWith('pg:') ? admin.pg : admin.mysql).query(drop.slice(3));
  });

  afterAll(async () => {
    await admin.pg.close();
    await admin.mysql.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function configFile(sink: Record<string, unknown>): Promise<string> {
    const file = join(dir, `${randomUUID()}.yaml`);
    await writeFile(file, stringify({ log: { level: 'silent' }, sales: { sink } }));
    return file;
  }

  const name = (): string => `ss_${randomUUID().replace(/-/g, '').slice(0, 20)}`;

  it('creates the tables in a PostgreSQL schema, then reports them up to date and checks them', async () => {
    const schema = name();
    await admin.pg.query(`CREATE SCHEMA "${schema}"`);
    drops.push(`pg:DROP SCHEMA "${schema}" CASCADE`);
    const config = await configFile({ kind: 'sql', url: PG_URL, schema });

    const created = await cli(['--config', config, 'migrate']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toBe(`created table storesync_sales in ${schema}\ncreated table storesync_sale_items in ${schema}\n`);
    const again = await cli(['--config', config, 'migrate', '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ created: [], addedColumns: [], unchanged: ['storesync_sales', 'storesync_sale_items'] });
    expect(await cli(['--config', config, 'migrate', '--check'])).toMatchObject({ code: 0, stdout: 'interface tables storesync_sales and storesync_sale_items are ready\n' });
  });

  it('creates custom-named tables in the MariaDB database named by the URL', async () => {
    const database = name();
    await admin.mysql.query(`CREATE DATABASE \`${database}\``);
    drops.push(`my:DROP DATABASE \`${database}\``);
    const config = await configFile({ kind: 'sql', url: `mysql://root@127.0.0.1:3306/${database}`, tables: { sales: 'web_orders', items: 'web_order_lines' } });
    const run = await cli(['--config', config, 'migrate']);
    expect(run).toMatchObject({ code: 0, stdout: 'created table web_orders\ncreated table web_order_lines\n' });
    const tables = await admin.mysql.query(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = :db`, { db: database });
    expect(tables.map((row) => String(row.t)).sort()).toEqual(['web_order_lines', 'web_orders']);
  });

  it('exits 1 naming the missing tables when --check finds none', async () => {
    const schema = name();
    await admin.pg.query(`CREATE SCHEMA "${schema}"`);
    drops.push(`pg:DROP SCHEMA "${schema}" CASCADE`);
    const run = await cli(['--config', await configFile({ kind: 'sql', url: PG_URL, schema }), 'migrate', '--check']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ERR_ERP_SCHEMA: sql-sink: interface tables not ready in ss_\w+: table storesync_sales is missing; table storesync_sale_items is missing; run "storesync migrate"/);
  });

  it('says there is nothing to migrate for a file sink', async () => {
    const run = await cli(['--config', await configFile({ kind: 'file', dir: join(dir, 'out') }), 'migrate']);
    expect(run).toMatchObject({ code: 0, stdout: 'sales.sink.kind is file: there are no interface tables to migrate\n' });
  });
});

describe('storesync sales', () => {
  let sim: Simulator;
  let dir: string;
  let config: string;
  const prefix = `test-${randomUUID()}`;
  const redis = createRedis('redis://127.0.0.1:6379/0');

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, sales: 0, users: 2, items: 10, timeZone: TIME_ZONE });
    dir = await mkdtemp(join(tmpdir(), 'storesync-sales-cli-'));
    config = join(dir, 'config.yaml');
    await writeFile(
      config,
      stringify({
        store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, timeZone: TIME_ZONE },
        redis: { prefix },
        log: { level: 'silent' },
        sales: { sink: { kind: 'file', dir: join(dir, 'out') } },
      }),
    );
    const created = (minutes: number): string => formatStoreDate(Date.now() - minutes * 60_000, TIME_ZONE);
    sim.addSale({ Id: 71, SiteId: 1, Status: 1, Total: 1500, CreationDate: created(30) });
    sim.addSale({ Id: 72, SiteId: 1, Status: 1, Total: 2500, CreationDate: created(20) });
    sim.addSale({ Id: 73, SiteId: 1, Status: 6, StatusText: 'Entregada', CreationDate: created(10) });
  });

  afterAll(async () => {
    await sim.close();
    await deleteKeys(redis, prefix);
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to pull or export without a configured sales.sink (exit 78), leaving the store\'s sales alone', async () => {
    const noSink = join(dir, 'no-sink.yaml');
    await writeFile(
      noSink,
      stringify({ store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, timeZone: TIME_ZONE }, redis: { prefix }, log: { level: 'silent' } }),
    );
    const off = /sales\.sink: not configured, so sales sync is off/;
    for (const argv of [['sales', 'pull'], ['sales', 'export', '72']]) {
      const run = await cli(['--config', noSink, ...argv]);
      expect(run.code, argv.join(' ')).toBe(78);
      expect(run.stderr).toMatch(off);
    }
    expect(sim.saleUpdates.filter((update) => update.saleId === 72)).toEqual([]);
    expect(await cli(['--config', noSink, 'migrate'])).toMatchObject({
      code: 0,
      stdout: 'sales.sink is not configured (sales sync is off): there are no interface tables to migrate\n',
    });
  });

  it('lists on a dry run the sales a pull would export', async () => {
    const run = await cli(['--config', config, 'sales', 'pull', '--dry-run', '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ dryRun: true, siteId: 1, statuses: [1], seen: 2, queued: 2 });
    expect(report.sales.map((sale: { saleId: number; action: string }) => [sale.saleId, sale.action])).toEqual([
      [71, 'export'],
      [72, 'export'],
    ]);
  });

  it('refuses a malformed window before calling anything (exit 3)', async () => {
    const run = await cli(['--config', config, 'sales', 'pull', '--from', '2024-02-30', '--status', '1,x']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/field --from = "2024-02-30" breaks "a date as YYYY-MM-DD".*field --status = "1,x" breaks "comma-separated integers"/);
  });

  it('exports one sale now and acknowledges it on the store', async () => {
    const run = await cli(['--config', config, 'sales', 'export', '71', '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({ saleId: 71, siteId: 1, erpRef: '1-71', exported: true, acked: true });
    expect(await readdir(join(dir, 'out'))).toEqual(['sale-1-71.json']);
    expect(sim.state.salesById.get(71)!.sale).toMatchObject({ Status: 2, Obeservations: 'ERP order 1-71' });
  });

  it('updates a shipment through the guard, refusing to reopen a delivered sale without --force', async () => {
    const refused = await cli(['--config', config, 'sales', 'fulfil', '73', '--status', '3']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/nothing sent: shipment update refused: sale 73: field Status = 3 breaks "no move out of the final status 6 \(Entregada\) without force"/);
    const forced = await cli(['--config', config, 'sales', 'fulfil', '73', '--status', '3', '--tracking-code', 'TN5', '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toEqual({ saleId: 73, outcome: 'updated', changed: ['Status', 'TrackingCode'] });
    expect(sim.state.salesById.get(73)!.sale).toMatchObject({ Status: 3, TrackingCode: 'TN5' });
  });

  it('refuses a shipment update without any field (exit 3)', async () => {
    const run = await cli(['--config', config, 'sales', 'fulfil', '72']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/at least one of --status, --status-text, --tracking-code, --observations/);
  });
});
