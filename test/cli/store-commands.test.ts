import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { cli, type CliRun } from '../helpers/cli.js';
import { deleteKeys } from '../support/redis.js';

let sim: Simulator;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, items: 20, sales: 120, users: 5, clients: 3 });
  env = { STORE_BASE_URL: sim.url, STORE_USERNAME: 'demo', STORE_PASSWORD: 'demo-password', LOG_LEVEL: 'silent' };
});

const dir = mkdtempSync(join(tmpdir(), 'storesync-store-cli-'));

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  sim.reset();
});

function store(...argv: string[]): Promise<CliRun> {
  return cli(['store', ...argv], env);
}

function json<T>(run: CliRun): T {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as T;
}

describe('storesync store inventory', () => {
  it('prints an item as a table by default and as JSON with --json', async () => {
    const table = await store('inventory', 'get', '--code', 'SKU-000001');
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^Code\s+Name\s+Stock\s+Price/);
    expect(table.stdout).toContain('SKU-000001');
    const items = json<Array<{ Code: string }>>(await store('inventory', 'get', '--code', 'SKU-000001', '--json'));
    expect(items.map((i) => i.Code)).toEqual(['SKU-000001']);
  });

  it('shows the price list beside its prices with --price-list-id, as the store answered (issue 28, 7)', async () => {
    const lists = await startSimulator({ port: 0, items: [{ Code: 'PL-1', Stock: 3, Price: 10 }], priceLists: [{ id: 1, code: 'RETAIL' }, { id: 2, code: 'WHOLESALE' }], sales: 0, users: 0, clients: 0 });
    try {
      const listEnv = { ...env, STORE_BASE_URL: lists.url };
      expect((await cli(['store', 'inventory', 'set', '--code', 'PL-1', '--price-list-id', '2', '--price', '8'], listEnv)).code).toBe(0);
      const wholesale = await cli(['store', 'inventory', 'get', '--code', 'PL-1', '--price-list-id', '2'], listEnv);
      expect(wholesale.code).toBe(0);
      const [header, , row] = wholesale.stdout.split('\n');
      expect(header, 'the table leaves out the list the prices are of').toMatch(/^Code\s+Name\s+Stock\s+Price\s+OfferPrice\s+PriceListId\s+PriceListCode\s+Published/);
      expect(row).toMatch(/^PL-1\s+\S+\s+3\s+8\s+(\S+\s+)?2\s+WHOLESALE\s/);
      // Without a list the table is as before: the store's default prices, no list columns.
      const plain = await cli(['store', 'inventory', 'get', '--code', 'PL-1'], listEnv);
      expect(plain.stdout.split('\n')[0]).not.toContain('PriceList');
    } finally {
      await lists.close();
    }
  });

  it('updates only the options given', async () => {
    const before = sim.state.items.get('SKU-000002')!.item;
    const run = await store('inventory', 'set', '--code', 'SKU-000002', '--stock', '7', '--published', 'false');
    expect(run.code).toBe(0);
    expect(sim.state.items.get('SKU-000002')!.item).toMatchObject({ Stock: 7, Published: false, Price: before.Price });
    expect(sim.writes.at(-1)?.fields).toEqual({ Stock: 7, Published: false });
  });

  it('prints the payload with --dry-run and sends nothing', async () => {
    const out = json<{ dryRun: boolean; payload: unknown }>(
      await store('inventory', 'set', '--code', 'SKU-000002', '--stock', '9', '--price', '10.50', '--dry-run', '--json'),
    );
    expect(out).toEqual({ dryRun: true, payload: { InternalId: 0, Code: 'SKU-000002', Stock: 9, Price: 10.5 } });
    expect(sim.counters().total).toBe(0);
  });

  it('exits 3 naming each bad option, and sends nothing', async () => {
    const run = await store('inventory', 'set', '--code', 'SKU-000002', '--stock', 'abc', '--for-sale', 'yes');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('--stock = "abc"');
    expect(run.stderr).toContain('--for-sale = "yes"');
    expect(sim.counters().total).toBe(0);
  });

  it('reports a value that does not parse and one that breaks a rule of the spec at once (--stock 1.5 --price 0)', async () => {
    const run = await store('inventory', 'set', '--code', 'SKU-000002', '--stock', '1.5', '--price', '0');
    expect(run.code).toBe(3);
    expect(run.stderr).toBe(
      'storesync: nothing sent: inventory set: field --stock = "1.5" breaks "integer"; SKU-000002: field Price = 0 breaks "number 0.01 to 999999.99 with at most 2 decimals"\n',
    );
    expect(sim.counters().total).toBe(0);
  });

  it('exits 3 when a value breaks a rule of the spec, even with --dry-run', async () => {
    const run = await store('inventory', 'set', '--code', 'SKU-000002', '--stock', '-4', '--dry-run');
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/SKU-000002: field Stock = -4 breaks "integer 0 to 999999"/);
  });

  it('exits 1 when the store does not know the code', async () => {
    const run = await store('inventory', 'set', '--code', 'NOPE-9', '--stock', '1');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('ERR_STORE_NOT_FOUND');
    expect(run.stderr).toContain('PUT /Api/Inventory');
  });

  it('exits 2 when a required option is missing', async () => {
    const run = await store('inventory', 'set', '--stock', '1');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--code');
  });
});

describe('storesync store sales', () => {
  it('pages through every sale by default and caps the total with --limit', async () => {
    expect(json<unknown[]>(await store('sales', 'list', '--json'))).toHaveLength(120);
    const limited = json<Array<{ Status: number }>>(await store('sales', 'list', '--status', '1,2', '--limit', '5', '--json'));
    expect(limited).toHaveLength(5);
    expect(limited.every((s) => s.Status === 1 || s.Status === 2)).toBe(true);
  });

  it('passes dates, e-mail, site and external reference filters', async () => {
    const sale = sim.state.salesById.get(9)!.sale;
    const found = json<Array<{ Id: number }>>(
      await store('sales', 'list', '--from', '2000-01-01', '--email', sale.UserData.EMail, '--site-id', String(sale.SiteId),
        '--external-reference', sale.ExternalReference, '--json'),
    );
    expect(found.map((s) => s.Id)).toEqual([9]);
    const bad = await store('sales', 'list', '--from', '01/02/2024', '--status', 'one');
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('--from');
    expect(bad.stderr).toContain('--status');
  });

  it('prints one sale as field/value rows', async () => {
    const run = await store('sales', 'get', '9');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^field\s+value/);
    expect(run.stdout).toMatch(/\nId\s+9\n/);
  });

  it('updates status, tracking and observations', async () => {
    const run = await store('sales', 'update', '9', '--status', '3', '--status-text', 'Completada', '--tracking', 'TN9', '--observations', 'ERP order 9');
    expect(run.code).toBe(0);
    expect(sim.state.salesById.get(9)!.sale).toMatchObject({ Status: 3, StatusText: 'Completada', TrackingCode: 'TN9', Obeservations: 'ERP order 9' });
  });

  it('exits 3 for an id that is not a number and 1 for an unknown sale', async () => {
    expect((await store('sales', 'get', 'abc')).code).toBe(3);
    expect((await store('sales', 'get', '99999')).code).toBe(1);
  });
});

describe('storesync store products, users and clients', () => {
  it('lists products with filters', async () => {
    const products = json<Array<{ Code: string }>>(await store('products', 'list', '--term', 'SKU-00001', '--ascending', 'false', '--order', 'Code', '--json'));
    expect(products[0]?.Code).toBe('SKU-000019');
    expect((await store('products', 'list', '--created-from', 'yesterday')).code).toBe(3);
  });

  it('gets, searches, creates and updates users', async () => {
    const [first] = sim.state.users.values();
    const id = String(first!.user.Id);
    expect(json<{ Id: number }>(await store('users', 'get', id, '--json')).Id).toBe(first!.user.Id);
    expect(json<unknown[]>(await store('users', 'search', '--fields', 'None', '--json'))).toHaveLength(5);
    const created = json<{ Id: number }>(
      await store('users', 'create', '--username', 'luz@example.com', '--first-name', 'Luz', '--last-name', 'Núñez',
        '--email', 'luz@example.com', '--password', 'Init-123', '--json'),
    );
    expect(sim.state.users.get(created.Id)?.user.LastName).toBe('Núñez');
    expect((await store('users', 'update', String(created.Id), '--phone', '555')).code).toBe(0);
    expect(sim.state.users.get(created.Id)?.user.Phone).toBe('555');
    expect((await store('users', 'search', '--fields', 'Email', '--term', 'x')).code).toBe(3);
  });

  it('reports a user option that does not parse and what the schema refuses at once', async () => {
    const run = await store('users', 'create', '--username', 'luz', '--first-name', 'Luz', '--last-name', 'Núñez',
      '--email', 'luz@example.com', '--password', 'Init-123', '--site-id', 'two', '--birthday', 'yesterday');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('field --site-id = "two" breaks "positive integer"');
    expect(run.stderr).toContain('user luz: field Birthday = "yesterday"');
    expect(sim.counters().total).toBe(0);
  });

  it('lists, gets, creates, updates and deletes clients', async () => {
    const list = json<Array<{ Id: number }>>(await store('clients', 'list', '--json'));
    expect(list).toHaveLength(3);
    expect(json<{ Id: number }>(await store('clients', 'get', String(list[0]!.Id), '--form', 'get', '--json')).Id).toBe(list[0]!.Id);
    const created = json<{ Id: number }>(await store('clients', 'create', '--json-body', '{"Name":"Kiosco","Email":"k@example.com"}', '--json'));
    expect((await store('clients', 'update', String(created.Id), '--json-body', '{"Phone":"1"}')).code).toBe(0);
    expect(sim.state.clients.get(created.Id)?.Phone).toBe('1');
    expect((await store('clients', 'delete', String(created.Id))).code).toBe(0);
    expect(sim.state.clients.has(created.Id)).toBe(false);
    const bad = await store('clients', 'create', '--json-body', '[1,2');
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('--json-body');
  });
});

describe('storesync store: login, help and configuration', () => {
  it('logs in and exits 0', async () => {
    const run = await store('login');
    expect(run).toMatchObject({ code: 0, stdout: 'login ok\n' });
  });

  it('exits 1 on refused credentials, without printing the password', async () => {
    const run = await cli(['store', 'login'], { ...env, STORE_PASSWORD: 'Bad-Secret-42' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('ERR_STORE_AUTH');
    expect(run.stderr).not.toContain('Bad-Secret-42');
  });

  it('exits 78 when the store credentials or URL are not configured', async () => {
    expect((await cli(['store', 'login'], { LOG_LEVEL: 'silent', STORE_BASE_URL: sim.url })).code).toBe(78);
    expect((await cli(['store', 'login'], { ...env, STORE_BASE_URL: 'not a url' })).code).toBe(78);
  });

  it('prints help for each group and exits 0', async () => {
    for (const group of ['inventory', 'products', 'sales', 'users', 'clients']) {
      const run = await store(group, '--help');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: storesync store ${group}`);
    }
    const set = await store('inventory', 'set', '--help');
    expect(set.stdout).toContain('--dry-run');
  });
});

describe('storesync store: every field of the API', () => {
  it('sets every writable field of an item, properties repeated, warranties as JSON', async () => {
    const run = await store('inventory', 'set', '--code', 'SKU-000003', '--taxes', '10.5', '--dep-stock', 'DEP-2', '--name', 'Mate',
      '--code2', 'ALT-3', '--external-reference', 'ERP-3', '--price-list-code', 'MAY', '--price-mode', 'null', '--precio-original', '1234.50',
      '--property', 'color=rojo', '--property', 'talle=M=grande', '--extended-warranty', '[{"Name":"1 year","Price":10,"Active":true,"Cant":5,"Code":"W1"}]',
      '--is-item', 'false', '--parent-item-code', 'SKU-000001', '--parent-item-id', '1', '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(sim.writes.at(-1)?.fields).toEqual({
      Taxes: 10.5, DepStock: 'DEP-2', Name: 'Mate', Code2: 'ALT-3', ExternalReference: 'ERP-3', PriceListCode: 'MAY', PriceMode: null,
      PrecioOriginal: '1234.50', Properties: [{ Key: 'color', Value: 'rojo' }, { Key: 'talle', Value: 'M=grande' }],
      ExtendedWarranty: [{ Name: '1 year', Price: 10, Active: true, Cant: 5, Code: 'W1' }], IsItem: false, ParentItemCode: 'SKU-000001', ParentItemId: 1,
    });
  });

  it('creates an item, from options over a --json-body file', async () => {
    const file = join(dir, 'item.json');
    writeFileSync(file, JSON.stringify({ Name: 'Yerba 1kg', Stock: 4, Price: 99.9 }));
    const run = await store('inventory', 'create', '--code', 'NEW-77', '--stock', '12', '--json-body', `@${file}`, '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ Success: true });
    expect(sim.state.items.get('NEW-77')!.item).toMatchObject({ Code: 'NEW-77', Name: 'Yerba 1kg', Stock: 12, Price: 99.9 });
    expect(sim.counters().requests['POST /Api/Inventory']).toBe(1);
  });

  it.each([
    [['inventory', 'set', '--code', 'SKU-000001', '--precio-original', '12,50'], 'field PrecioOriginal = "12,50"'],
    [['inventory', 'set', '--code', 'SKU-000001', '--taxes', '120'], 'field Taxes = 120'],
    [['inventory', 'set', '--code', 'SKU-000001', '--property', 'color'], '--property = "color" breaks "key=value"'],
    [['inventory', 'set', '--code', 'SKU-000001', '--extended-warranty', '{x'], '--extended-warranty'],
    [['inventory', 'set', '--code', 'SKU-000001', '--json-body', '{"Stok":1}'], 'field Stok = 1 breaks "not a field of the inventory item"'],
    [['inventory', 'create', '--code', ' NEW-1'], 'breaks "no spaces before or after'],
    [['inventory', 'create', '--code', 'NEW-1', '--json-body', `@${join(dir, 'missing.json')}`], 'breaks "a readable file (ENOENT)"'],
    [['sales', 'list', '--postal-code', 'B1414'], 'field postal_code = "B1414" breaks "integer (digits only)"'],
    [['sales', 'list', '--offset', '-1'], 'field offset = -1 breaks "integer, 0 or more"'],
    [['sales', 'list', '--sub-status', 'x', '--pay-method-id', '0'], '--pay-method-id = "0"'],
    [['sales', 'get', '9', '--from', 'yesterday'], '--from = "yesterday"'],
    [['sales', 'update', '9', '--operation-status', 'x'], '--operation-status = "x"'],
    [['sales', 'update', '9', '--json-body', '{"Observations":"x"}'], 'field Observations = "x" breaks "not a field of the sale update"'],
    [['sales', 'update', '9', '--status', '7'], 'the text of status 7'],
    [['sales', 'update', '9'], 'at least one change'],
    [['users', 'update', '1', '--birthday', '1990-13-01'], 'field Birthday = "1990-13-01"'],
    [['users', 'update', '1', '--json-body', '{"Password":"x"}'], 'field Password = "x" breaks "only sent on creation'],
    [['users', 'create', '--username', 'a@example.com'], 'field FirstName = undefined'],
    [['clients', 'create', '--json-body', '@nope.json'], '--json-body'],
  ])('exits 3 for %j and sends nothing', async (argv, message) => {
    const run = await store(...argv);
    expect(run.stderr).toContain(message);
    expect(run.code).toBe(3);
    expect(sim.counters().total).toBe(0);
  });

  it('does not offer --password on a user update (creation only)', async () => {
    const run = await store('users', 'update', '1', '--password', 'x');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option '--password'");
  });

  it('lists sales by sub-status, payment method, document, phone digits, postal code and name, with an offset', async () => {
    const target = sim.addSale({ Id: 5000, SubStatus: 7, PayMethodId: 3, UserData: { IdNumber: '30999888', Phone: '+54 11 4000-9876', PostalCode: '7600', FirstName: 'Zoë', LastName: 'Quiroga' } });
    const found = json<Array<{ Id: number }>>(
      await store('sales', 'list', '--sub-status', '7', '--pay-method-id', '3', '--identification-number', '30999888', '--last-digits-phone', '9876',
        '--postal-code', '7600', '--full-name', 'zoe quir', '--json'),
    );
    expect(found.map((s) => s.Id)).toEqual([target.Id]);
    const all = json<Array<{ Id: number }>>(await store('sales', 'list', '--json'));
    const skipped = json<Array<{ Id: number }>>(await store('sales', 'list', '--offset', '100', '--json'));
    expect(skipped.map((s) => s.Id)).toEqual(all.slice(100).map((s) => s.Id));
  });

  it('gets a sale with --from/--to', async () => {
    expect(json<{ Id: number }>(await store('sales', 'get', '9', '--from', '2020-01-01', '--to', '2030-12-31', '--json')).Id).toBe(9);
  });

  it('updates OperationStatus and Message, reading the sale first and keeping the fields not given', async () => {
    sim.faults.set({ replacingSalePut: true });
    const before = { ...sim.state.salesById.get(9)!.sale };
    const run = await store('sales', 'update', '9', '--operation-status', '5', '--message', 'Listo', '--json-body', '{"TrackingCode":"TN-9"}');
    expect(run.code).toBe(0);
    expect(sim.state.salesById.get(9)!.sale).toMatchObject({
      OperationStatus: 5, Message: 'Listo', TrackingCode: 'TN-9', Status: before.Status, StatusText: before.StatusText, Obeservations: before.Obeservations,
    });
    expect(sim.counters().requests).toMatchObject({ 'GET /Api/Sale/{id}': 1, 'PUT /Api/Sale/{id}': 1 });
  });

  it('searches users without --fields, and creates and updates users from --json-body', async () => {
    expect(json<unknown[]>(await store('users', 'search', '--json'))).toHaveLength(5);
    const created = json<{ Id: number }>(
      await store('users', 'create', '--json-body', '{"Username":"rio@example.com","FirstName":"Río","LastName":"Paz","EMail":"rio@example.com","Password":"P-1"}',
        '--birthday', '1990-02-28', '--json'),
    );
    expect(sim.state.users.get(created.Id)?.user).toMatchObject({ FirstName: 'Río', Birthday: '1990-02-28' });
    expect((await store('users', 'update', String(created.Id), '--json-body', '{"City":"5000"}', '--ui-lang', 'en')).code).toBe(0);
    expect(sim.state.users.get(created.Id)?.user).toMatchObject({ City: '5000', UILang: 'en' });
  });
});

describe('storesync store with store.rateLimit', () => {
  const redisUrl = 'redis://127.0.0.1:6379/0';

  async function rateLimitedConfig(redis: string, prefix: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'storesync-store-limit-'));
    dirs.push(dir);
    const file = join(dir, 'config.yaml');
    await writeFile(file, `store:\n  rateLimit: { max: 50, durationMs: 1000 }\nredis:\n  url: ${redis}\n  prefix: ${prefix}\n`);
    return file;
  }
  const dirs: string[] = [];
  const admin = createRedis(redisUrl);
  const prefix = `test-${randomUUID()}`;

  afterAll(async () => {
    await deleteKeys(admin, prefix);
    admin.disconnect();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('takes its requests from the shared budget in Redis', async () => {
    const config = await rateLimitedConfig(redisUrl, prefix);
    const run = await cli(['--config', config, 'store', 'inventory', 'get', '--code', 'SKU-000001', '--json'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    // The login and the read each hold a slot of the window for a second after their answer.
    expect(await admin.zcard(`${prefix}:store-rate-limit`)).toBe(2);
  });

  it('still works while Redis does not answer, saying its requests are not counted', async () => {
    const config = await rateLimitedConfig('redis://127.0.0.1:1/0', prefix);
    const run = await cli(['--config', config, 'store', 'inventory', 'get', '--code', 'SKU-000001', '--json'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^storesync: warning: Redis at redis:\/\/127\.0\.0\.1:1\/0 does not answer \(.*\); this command's store requests are not counted in store\.rateLimit\n$/);
    expect(JSON.parse(run.stdout)).toEqual([expect.objectContaining({ Code: 'SKU-000001' })]);
  });
});
