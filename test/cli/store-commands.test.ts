import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { cli, type CliRun } from '../helpers/cli.js';

let sim: Simulator;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, items: 20, sales: 120, users: 5, clients: 3 });
  env = { STORE_BASE_URL: sim.url, STORE_USERNAME: 'demo', STORE_PASSWORD: 'demo-password', LOG_LEVEL: 'silent' };
});

afterAll(async () => {
  await sim.close();
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
