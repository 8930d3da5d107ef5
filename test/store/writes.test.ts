/**
 * Writes as the spec recommends and as a real store may answer them: complete sale updates, a status
 * always with its text, non-JSON 2xx answers taken as success (never repeated), and every value the spec
 * rules out refused before a request is sent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { storeSchema } from '../../src/config/schema.js';
import { ValidationError, type ValidationIssue } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { StoreClient } from '../../src/store/client.js';
import { StoreBadResponseError } from '../../src/store/errors.js';
import type { UserCreate, UserUpdate } from '../../src/store/schemas/index.js';
import { startFakeRemote } from './fake-remote.js';
import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture;

beforeAll(async () => {
  fixture = await storeFixture({ items: 5, sales: 0, users: 2, clients: 2 });
});

afterAll(async () => {
  await fixture.close();
});

beforeEach(async () => {
  fixture.sim.reset();
  fixture.sim.addSale({ Id: 31, Status: 1, StatusText: 'Confirmada', OperationStatus: 4, TrackingCode: 'TN-31', Obeservations: 'Ring twice', Message: 'Gift' });
  await fixture.client.login();
  fixture.sim.resetCounters();
});

/** The issue of a ValidationError thrown by `action`, after checking that it sent nothing. */
async function refusal(action: () => Promise<unknown>): Promise<readonly ValidationIssue[]> {
  const error = await action().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  expect(fixture.sim.counters().total).toBe(0);
  return (error as ValidationError).issues;
}

const sale = () => fixture.sim.state.salesById.get(31)!.sale;

describe('sale updates', () => {
  it('sends the complete update structure, so a store that replaces on PUT keeps what the change leaves alone', async () => {
    fixture.sim.faults.set({ replacingSalePut: true });
    const { sent } = await fixture.client.sales.change(31, { TrackingCode: 'TN-32' });
    expect(sent).toEqual({ Id: 31, Status: 1, StatusText: 'Confirmada', OperationStatus: 4, TrackingCode: 'TN-32', Obeservations: 'Ring twice', Message: 'Gift' });
    expect(sale()).toMatchObject({ Status: 1, StatusText: 'Confirmada', OperationStatus: 4, TrackingCode: 'TN-32', Obeservations: 'Ring twice', Message: 'Gift' });
    expect(fixture.sim.counters().requests).toEqual({ 'GET /Api/Sale/{id}': 1, 'PUT /Api/Sale/{id}': 1 });
  });

  it('sends a new status with its text from store.statusTexts, and keeps the store text of an unchanged status', async () => {
    fixture.sim.faults.set({ replacingSalePut: true });
    expect((await fixture.client.sales.change(31, { Status: 6 })).sent).toMatchObject({ Status: 6, StatusText: 'Delivered' });
    expect(sale()).toMatchObject({ Status: 6, StatusText: 'Delivered', TrackingCode: 'TN-31' });
    fixture.sim.state.salesById.get(31)!.sale.StatusText = 'Entregada';
    expect((await fixture.client.sales.change(31, { Status: 6, Message: 'x' })).sent).toMatchObject({ Status: 6, StatusText: 'Entregada' });
    await fixture.client.sales.update(31, { Status: -2 });
    expect(sale()).toMatchObject({ Status: -2, StatusText: 'Cancelled' });
  });

  it('takes the texts of a store with its own statuses from the configuration', async () => {
    const client = fixture.newClient({ store: { statusTexts: { ...storeSchema.parse({}).statusTexts, 7: 'Retirado' } } });
    await client.sales.update(31, { Status: 7 });
    expect(sale()).toMatchObject({ Status: 7, StatusText: 'Retirado' });
  });

  it('refuses a status without a configured text before reading or sending anything', async () => {
    expect(await refusal(() => fixture.client.sales.update(31, { Status: 7 }))).toEqual(await refusal(() => fixture.client.sales.change(31, { Status: 7 })));
    const issues = await refusal(() => fixture.client.sales.change(31, { Status: 7 }));
    expect(issues).toEqual([
      { record: 'sale 31', field: 'StatusText', value: undefined, rule: 'the text of status 7: send StatusText or add the status to store.statusTexts' },
    ]);
  });

  it('checks the change before reading the sale', async () => {
    const issues = await refusal(() => fixture.client.sales.change(31, { Observations: 'typo' } as never));
    expect(issues[0]).toMatchObject({ record: 'sale 31', field: 'Observations', rule: 'not a field of the sale update' });
  });
});

describe('writes answered with an empty body, OK or an HTML page', () => {
  it('are successes, sent once each: inventory PUT and POST, sale PUT, user POST and PUT, client POST and PUT', async () => {
    fixture.sim.faults.set({ nonJsonWriteBodies: true });
    const [user] = fixture.sim.state.users.values();
    const [client] = fixture.sim.state.clients.values();
    const { client: store } = fixture;
    expect(await store.inventory.update({ Code: 'SKU-000001', Stock: 3 })).toEqual({ Success: true });
    expect(await store.inventory.create({ Code: 'NEW-1', Stock: 1 })).toEqual({ Success: true });
    expect((await store.sales.change(31, { TrackingCode: 'TN-40' })).answer).toBeNull();
    expect(await store.users.create({ Username: 'luz@example.com', FirstName: 'Luz', LastName: 'Paz', EMail: 'luz@example.com', Password: 'Init-1' })).toBeNull();
    expect(await store.users.update({ Id: user!.user.Id, Phone: '555' })).toBeNull();
    expect(await store.clients.create({ Name: 'Kiosco', Email: 'k@example.com' })).toBeNull();
    expect(await store.clients.update(client!.Id, { Phone: '1' })).toBeNull();

    expect(fixture.sim.counters().requests).toEqual({
      'PUT /Api/Inventory': 1,
      'POST /Api/Inventory': 1,
      'GET /Api/Sale/{id}': 1,
      'PUT /Api/Sale/{id}': 1,
      'POST /Api/User': 1,
      'PUT /Api/User/{id}': 1,
      'POST /Api/Client': 1,
      'PUT /Api/Client/{id}': 1,
    });
    expect(fixture.delays).toEqual([]);
    expect(fixture.sim.state.items.get('SKU-000001')!.item.Stock).toBe(3);
    expect(fixture.sim.state.items.has('NEW-1')).toBe(true);
    expect(sale().TrackingCode).toBe('TN-40');
    expect([...fixture.sim.state.users.values()].some((u) => u.user.Username === 'luz@example.com')).toBe(true);
    expect([...fixture.sim.state.clients.values()].some((c) => c.Email === 'k@example.com')).toBe(true);
  });
});

describe('checks before sending', () => {
  it('refuses a PrecioOriginal that is not a decimal written as text', async () => {
    expect(await refusal(() => fixture.client.inventory.update({ Code: 'SKU-000001', PrecioOriginal: '12,50' }))).toEqual([
      { record: 'SKU-000001', field: 'PrecioOriginal', value: '12,50', rule: 'a decimal written as text, such as "1234.50"' },
    ]);
  });

  it('refuses a Code with spaces around it', async () => {
    expect(await refusal(() => fixture.client.inventory.create({ Code: 'SKU-9 ', Stock: 1 }))).toEqual([
      { field: 'Code', value: 'SKU-9 ', rule: 'no spaces before or after (the Code is the key of the item)', record: 'SKU-9 ' },
    ]);
  });

  it('refuses a postal_code that is not an integer and a negative limit or offset', async () => {
    expect(await refusal(() => fixture.client.sales.list({ postalCode: 'B1414' }))).toEqual([
      { field: 'postal_code', value: 'B1414', rule: 'integer (digits only)' },
    ]);
    expect(await refusal(() => fixture.client.sales.list({ limit: -1, offset: -5 }))).toEqual([
      { field: 'limit', value: -1, rule: 'integer, 0 or more' },
      { field: 'offset', value: -5, rule: 'integer, 0 or more' },
    ]);
    await expect(fixture.client.sales.list({ postalCode: 5000 })).resolves.toEqual([]);
  });

  it('refuses a Password on a user update (creation only), a Birthday that is not a date, and an unknown field', async () => {
    const [user] = fixture.sim.state.users.values();
    const id = user!.user.Id;
    expect(await refusal(() => fixture.client.users.update({ Id: id, Password: 'New-1' } as unknown as UserUpdate))).toEqual([
      { record: `user ${id}`, field: 'Password', value: 'New-1', rule: 'only sent on creation (the spec: "Only used on creation")' },
    ]);
    expect(await refusal(() => fixture.client.users.update({ Id: id, Birthday: '1990-02-30' }))).toEqual([
      { record: `user ${id}`, field: 'Birthday', value: '1990-02-30', rule: 'a date as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (ISO 8601 without zone)' },
    ]);
    const create = { Username: 'a@example.com', FirstName: 'A', LastName: 'B', EMail: 'a@example.com', Password: 'P-1', Birthday: 'ayer', Telefono: '1' };
    expect(await refusal(() => fixture.client.users.create(create as unknown as UserCreate))).toEqual([
      { record: 'user a@example.com', field: 'Birthday', value: 'ayer', rule: 'a date as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (ISO 8601 without zone)' },
      { record: 'user a@example.com', field: 'Telefono', value: '1', rule: 'not a writable field of the user (names are case-sensitive)' },
    ]);
    await fixture.client.users.update({ Id: id, Birthday: '1990-02-28T00:00:00' });
    expect(fixture.sim.state.users.get(id)!.user.Birthday).toBe('1990-02-28T00:00:00');
  });
});

describe('user search answers', () => {
  it('calls a wrapped answer ({Data: [...]}) a bad response naming its shape, not a list of one empty user', async () => {
    const fake = await startFakeRemote((request) => (request.path === '/Api/User' ? { body: { Data: [{ Id: 1, Username: 'a' }] } } : undefined));
    const client = new StoreClient({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password', retry: { attempts: 1 } }),
      logger: silentLogger(),
    });
    try {
      const error = await client.users.search({ term: 'a' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreBadResponseError);
      expect((error as Error).message).toContain('a user search answers an array of users, got an object with keys Data');
    } finally {
      await client.close();
      await fake.close();
    }
  });
});

describe('inventory write answers of an unexpected JSON shape', () => {
  it('are successes, not bad responses that a worker would retry into a second creation', async () => {
    const fake = await startFakeRemote((request) =>
      request.path === '/Api/Inventory' ? { body: request.method === 'POST' ? { Success: 'yes', Id: 'x' } : ['saved'] } : undefined,
    );
    const client = new StoreClient({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password' }),
      logger: silentLogger(),
    });
    try {
      expect(await client.inventory.create({ Code: 'NEW-1', Stock: 1 })).toEqual({ Success: true });
      expect(await client.inventory.update({ Code: 'NEW-1', Stock: 2 })).toEqual({ Success: true });
      expect(fake.requests.filter((r) => r.path === '/Api/Inventory').map((r) => r.method)).toEqual(['POST', 'PUT']);
    } finally {
      await client.close();
      await fake.close();
    }
  });
});

describe('the hash and query of inventory writes (issue 27: the signed query built once per hash)', () => {
  it('signs every PUT with the current hash and mode=default, the new hash after a re-login', async () => {
    let logins = 0;
    let puts = 0;
    const fake = await startFakeRemote((request) => {
      if (request.path === '/Api/Auth/') return { body: { status: '0', message: 'ok', data: `H${(logins += 1)}` } };
      if (request.path !== '/Api/Inventory') return undefined;
      puts += 1;
      // The third PUT meets an expired hash: refused once, sent again with the new one.
      return puts === 3 ? { status: 401, body: { Message: 'expired' } } : { body: { Success: true, Message: 'saved', Id: puts } };
    });
    const client = new StoreClient({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password' }),
      logger: silentLogger(),
    });
    try {
      const answers = [];
      for (let i = 1; i <= 4; i += 1) answers.push(await client.inventory.update({ Code: `W-${i}`, Stock: i }));
      const sent = fake.requests.filter((r) => r.path === '/Api/Inventory').map((r) => `${r.query.toString()} ${JSON.parse(r.body).Code as string}`);
      expect(sent).toEqual(['mode=default&hash=H1 W-1', 'mode=default&hash=H1 W-2', 'mode=default&hash=H1 W-3', 'mode=default&hash=H2 W-3', 'mode=default&hash=H2 W-4']);
      // The store's answer as it wrote it, other fields kept.
      expect(answers).toEqual([
        { Success: true, Message: 'saved', Id: 1 },
        { Success: true, Message: 'saved', Id: 2 },
        { Success: true, Message: 'saved', Id: 4 },
        { Success: true, Message: 'saved', Id: 5 },
      ]);
    } finally {
      await client.close();
      await fake.close();
    }
  });

  it('reads an answer of loose types as the schema does (Success as 1, a number as Message beside a boolean Success), and one without either as it is', async () => {
    const bodies: unknown[] = [{ Success: 1, Message: 12 }, { Success: true, Message: 12 }, { Message: null }, {}];
    const fake = await startFakeRemote((request) => (request.path === '/Api/Inventory' ? { body: bodies.shift() } : undefined));
    const client = new StoreClient({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password' }),
      logger: silentLogger(),
    });
    try {
      expect(await client.inventory.update({ Code: 'L-1', Stock: 1 })).toEqual({ Success: true, Message: '12' });
      // A boolean Success with a number as Message: the Message is still read as text.
      expect(await client.inventory.update({ Code: 'L-1', Stock: 1 })).toEqual({ Success: true, Message: '12' });
      expect(await client.inventory.update({ Code: 'L-1', Stock: 2 })).toEqual({ Message: null });
      expect(await client.inventory.update({ Code: 'L-1', Stock: 3 })).toEqual({});
    } finally {
      await client.close();
      await fake.close();
    }
  });

  it('reads a Success written as text as the boolean it names, a refusal as a refusal', async () => {
    // The schema's loose boolean takes 'true' / 'false' (and '1' / '0') written as text.
    const bodies: unknown[] = [{ Success: 'false', Message: 'no such code' }, { Success: 'true' }, { Success: '0', Message: 'refused' }];
    const fake = await startFakeRemote((request) => (request.path === '/Api/Inventory' ? { body: bodies.shift() } : undefined));
    const client = new StoreClient({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password' }),
      logger: silentLogger(),
    });
    try {
      expect(await client.inventory.update({ Code: 'L-1', Stock: 1 })).toEqual({ Success: false, Message: 'no such code' });
      expect(await client.inventory.update({ Code: 'L-1', Stock: 2 })).toEqual({ Success: true });
      expect(await client.inventory.update({ Code: 'L-1', Stock: 3 })).toEqual({ Success: false, Message: 'refused' });
    } finally {
      await client.close();
      await fake.close();
    }
  });
});
