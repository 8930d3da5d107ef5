import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/errors.js';
import { Metrics } from '../../src/metrics.js';
import { StoreBadResponseError, StoreConflictError, StoreNotFoundError, StoreRejectedError, StoreTimeoutError } from '../../src/store/errors.js';
import type { RecordReject } from '../../src/store/records.js';
import { READ_RULES } from '../../src/store/schemas/fields.js';
import type { InventoryItem } from '../../src/store/schemas/index.js';
import { type FakeAnswer, startFakeRemote } from './fake-remote.js';
import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture;
const metrics = new Metrics({ defaultMetrics: false });

beforeAll(async () => {
  fixture = await storeFixture({ items: 40 }, { metrics });
});

afterAll(async () => {
  await fixture.close();
});

beforeEach(async () => {
  // reset() also forgets the issued hashes: log in again so that request counts are not doubled by a 401.
  fixture.sim.reset();
  await fixture.client.login();
});

describe('inventory.get', () => {
  it('returns every item through both documented paths', async () => {
    const viaGet = await fixture.client.inventory.get();
    const viaPlain = await fixture.client.inventory.get({}, { form: 'plain' });
    expect(viaGet).toHaveLength(40);
    expect(viaPlain.map((item) => item.Code)).toEqual(viaGet.map((item) => item.Code));
    expect(fixture.sim.counters().requests).toMatchObject({ 'GET /Api/Inventory/Get': 1, 'GET /Api/Inventory': 1 });
  });

  it('filters by code, site and price list, and adds preferences on request', async () => {
    const [item] = await fixture.client.inventory.get({ code: 'SKU-000003', includePreferences: true });
    expect(item).toMatchObject({ Code: 'SKU-000003' });
    expect(item).toHaveProperty('Preferences');
    const site = item!.SiteId!;
    const bySite = await fixture.client.inventory.get({ siteId: site });
    expect(bySite.length).toBeGreaterThan(0);
    expect(bySite.every((i) => i.SiteId === site)).toBe(true);
    const byList = await fixture.client.inventory.get({ pricelistId: item!.PriceListId!, code: 'SKU-000003' });
    expect(byList).toHaveLength(1);
    expect(await fixture.client.inventory.get({ code: 'NO-SUCH-CODE' })).toEqual([]);
  });
});

describe('inventory.get against a store that varies', () => {
  it('reads a loosely typing store\'s items as the same typed values, Taxes and DepStock kept as sent', async () => {
    const typed = await fixture.client.inventory.get();
    fixture.sim.faults.set({ looseTypes: true });
    const loose = await fixture.client.inventory.get();
    const view = (item: InventoryItem) => [item.Code, item.Stock, item.Price, item.OfferPrice, item.ForSale, item.Published, item.IsItem, item.SiteId, item.PriceListId];
    expect(loose.map(view)).toEqual(typed.map(view));
    const sample = loose.find((item) => item.Code === 'SKU-000003')!;
    const taxes = typed.find((item) => item.Code === 'SKU-000003')!.Taxes;
    expect([{ Name: 'IVA', Value: taxes }, [{ Name: 'IVA', Value: taxes }]]).toContainEqual(sample.Taxes);
    expect(sample).toHaveProperty('ChannelData');
  });

  it('sets aside a malformed item, naming code, field, value and rule, and returns every other one', async () => {
    fixture.sim.faults.set({ malformedItemCodes: ['SKU-000007'] });
    const rejects: RecordReject[] = [];
    const items = await fixture.client.inventory.get({}, { onReject: (reject) => void rejects.push(reject) });
    expect(items).toHaveLength(39);
    expect(rejects).toEqual([
      expect.objectContaining({ resource: 'inventory', id: 'SKU-000007', field: 'Price', value: 'consultar', rule: READ_RULES.number }),
    ]);
  });
});

describe('inventory.each (the body read as a stream)', () => {
  /** A client of a fake store answering the inventory GET with `answer`. */
  async function answering(answer: FakeAnswer, attempts = 1) {
    const fake = await startFakeRemote((request) => (request.path === '/Api/Inventory/Get' ? answer : undefined));
    const client = fixture.newClient({ store: { baseUrl: fake.url, retry: { attempts, baseDelayMs: 1, maxDelayMs: 1 } } });
    return { client, requests: () => fake.requests.filter((request) => request.path === '/Api/Inventory/Get').length, close: () => fake.close() };
  }
  const item = (n: number) => ({ InternalId: n, Code: `S-${n}`, Stock: n, Price: n + 0.5, Name: `Ñandú "${n}" \\ €` });

  it('hands over every element of a large array as JSON.parse reads it', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => item(i + 1));
    const { client, close } = await answering({ body: `  ${JSON.stringify(items)}\n` });
    const seen: unknown[] = [];
    await client.inventory.each({}, (visited) => void seen.push(visited));
    await close();
    expect(seen).toEqual(JSON.parse(JSON.stringify(items)));
  });

  it('reads a single item answered where a list was expected as a list of one', async () => {
    const { client, close } = await answering({ body: item(7) });
    const items = await client.inventory.get({ code: 'S-7' });
    await close();
    expect(items.map((i) => i.Code)).toEqual(['S-7']);
  });

  it('throws StoreRejectedError for {Success:false} and StoreBadResponseError for a truncated array', async () => {
    const rejected = await answering({ body: { Success: false, Message: 'no access' } });
    await expect(rejected.client.inventory.get()).rejects.toBeInstanceOf(StoreRejectedError);
    await rejected.close();
    const truncated = await answering({ body: `[${JSON.stringify(item(1))},{"Code":"S-2","Sto` });
    const error = await truncated.client.inventory.get().catch((e: unknown) => e);
    await truncated.close();
    expect(error).toBeInstanceOf(StoreBadResponseError);
    expect((error as Error).message).toContain('response is not JSON');
  });

  it('reads the body only once beforeBody is done, and lets an error of it through, unretried and unwrapped', async () => {
    const items = Array.from({ length: 3000 }, (_, i) => item(i + 1));
    const { client, requests, close } = await answering({ body: items }, 3);
    const seen: string[] = [];
    let ready!: () => void;
    const read = client.inventory.each({}, (visited) => void seen.push(visited.Code), { beforeBody: () => new Promise<void>((resolve) => (ready = resolve)) });
    await expect.poll(() => ready).toBeTypeOf('function');
    expect(seen).toEqual([]);
    ready();
    await read;
    expect(seen).toHaveLength(3000);

    const failure = new Error('ERP read failed');
    const error = await client.inventory.each({}, () => {}, { beforeBody: () => Promise.reject(failure) }).catch((e: unknown) => e);
    await close();
    expect(error).toBe(failure);
    expect(requests()).toBe(2);
  });

  it('sets aside an element of the wrong shape as it arrives and goes on with the next ones', async () => {
    const { client, close } = await answering({ body: [item(1), { ...item(2), Stock: 'many' }, item(3)] });
    const seen: string[] = [];
    const rejects: RecordReject[] = [];
    await client.inventory.each({}, (visited) => void seen.push(visited.Code), { onReject: (reject) => void rejects.push(reject) });
    await close();
    expect(seen).toEqual(['S-1', 'S-3']);
    expect(rejects).toEqual([expect.objectContaining({ resource: 'inventory', id: 'S-2', field: 'Stock', value: 'many' })]);
  });
});

describe('inventory timeouts', () => {
  it('gives up on an answer slower than requestTimeoutMs with StoreTimeoutError, after retrying the GET', async () => {
    const impatient = fixture.newClient({ store: { requestTimeoutMs: 250, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } } });
    await impatient.login();
    const attempts: Array<number | 'error'> = [];
    impatient.events.on('store:request', (event) => void attempts.push(event.status));
    fixture.sim.faults.set({ latencyMs: 5_000 });
    const error = await impatient.inventory.get({ code: 'SKU-000001' }).catch((e: unknown) => e);
    fixture.sim.faults.set({ latencyMs: 0 });
    expect(error).toBeInstanceOf(StoreTimeoutError);
    expect((error as StoreTimeoutError).message).toContain('GET /Api/Inventory/Get');
    expect(attempts).toEqual(['error', 'error']);
  });
});

describe('inventory.update', () => {
  it('changes only the fields sent, with InternalId 0, and keeps UTF-8 text intact', async () => {
    const before = fixture.sim.state.items.get('SKU-000005')!.item;
    const result = await fixture.client.inventory.update({ Code: 'SKU-000005', Stock: 17, Name: 'Camión de juguete ñandú' });
    expect(result.Success).toBe(true);
    const after = fixture.sim.state.items.get('SKU-000005')!.item;
    expect(after).toMatchObject({ Stock: 17, Name: 'Camión de juguete ñandú', Price: before.Price, Published: before.Published });
    expect(fixture.sim.writes.at(-1)).toMatchObject({ code: 'SKU-000005', op: 'update', fields: { Stock: 17, Name: 'Camión de juguete ñandú' } });
  });

  it('sends nothing, not even a login, when the item breaks a rule, and names record, field and rule', async () => {
    fixture.sim.resetCounters();
    const error = await fixture.client.inventory.update({ Code: 'SKU-000005', Stock: -1, Price: 10.005 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([
      { record: 'SKU-000005', field: 'Stock', value: -1, rule: 'integer 0 to 999999' },
      { record: 'SKU-000005', field: 'Price', value: 10.005, rule: 'number 0.01 to 999999.99 with at most 2 decimals' },
    ]);
    expect(fixture.sim.counters().total).toBe(0);
  });

  it('throws StoreNotFoundError for an unknown code, without retrying', async () => {
    fixture.sim.resetCounters();
    await expect(fixture.client.inventory.update({ Code: 'NOPE-1', Stock: 1 })).rejects.toBeInstanceOf(StoreNotFoundError);
    expect(fixture.sim.counters().requests['PUT /Api/Inventory']).toBe(1);
  });

  it('throws StoreRejectedError when the store answers {Success:false} with HTTP 200', async () => {
    fixture.sim.faults.set({ successFalseRate: 1 });
    const error = await fixture.client.inventory.update({ Code: 'SKU-000006', Stock: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRejectedError);
    expect((error as StoreRejectedError).status).toBe(200);
    expect(fixture.sim.writes).toHaveLength(0);
  });

  it('retries injected 500s and succeeds, recording metrics under the endpoint template', async () => {
    let calls = 0;
    fixture.sim.faults.set({ failRate: 1 });
    const off = fixture.client.events.on('store:retry', () => {
      calls += 1;
      if (calls === 2) fixture.sim.faults.set({ failRate: 0 });
    });
    await fixture.client.inventory.update({ Code: 'SKU-000007', Stock: 3 });
    off();
    expect(calls).toBe(2);
    const text = await metrics.render();
    expect(text).toContain('storesync_store_requests_total{endpoint="/Api/Inventory",method="PUT",status="500"}');
    expect(text).toContain('storesync_store_requests_total{endpoint="/Api/Inventory",method="PUT",status="200"}');
    expect(text).not.toContain('hash');
  });
});

describe('inventory.create', () => {
  it('creates an item by POST to the configured path', async () => {
    const result = await fixture.client.inventory.create({ Code: 'NEW-1', Name: 'Nuevo', Stock: 4, Price: 99.9 });
    expect(result.Success).toBe(true);
    expect(fixture.sim.state.items.get('NEW-1')?.item).toMatchObject({ Stock: 4, Price: 99.9 });
    expect(fixture.sim.writes.at(-1)).toMatchObject({ op: 'create', code: 'NEW-1' });
  });

  it('throws StoreConflictError for an existing code, sent once', async () => {
    fixture.sim.resetCounters();
    await expect(fixture.client.inventory.create({ Code: 'SKU-000001' })).rejects.toBeInstanceOf(StoreConflictError);
    expect(fixture.sim.counters().requests['POST /Api/Inventory']).toBe(1);
  });

  it('validates like an update', async () => {
    await expect(fixture.client.inventory.create({ Code: '', Stock: 1 })).rejects.toBeInstanceOf(ValidationError);
  });
});
