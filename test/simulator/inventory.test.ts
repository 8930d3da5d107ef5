import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type SimItem, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

const ITEMS = [
  { Code: 'A-1', Stock: 10, Price: 100, SiteId: 1, PriceListId: 1, Name: 'Mate de calabaza' },
  { Code: 'A-2', Stock: 20, Price: 200, SiteId: 2, PriceListId: 1, Name: 'Bombilla de alpaca' },
  { Code: 'A-3', Stock: 30, Price: 300, SiteId: 1, PriceListId: 2, Name: 'Termo acero' },
];

const put = (s: Session, body: unknown, query: Record<string, string> = { mode: 'default' }) =>
  s.call<{ Success: boolean; Message: string }>('PUT', '/Api/Inventory', { body, query });

describe('simulator inventory', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: ITEMS, sales: 0, users: 0 });
    s = await session(sim.url);
  });
  beforeEach(() => sim.setItems(ITEMS));
  afterAll(() => sim.close());

  it('returns every item without filters, on both query paths', async () => {
    const a = await s.call<SimItem[]>('GET', '/Api/Inventory/Get');
    const b = await s.call<SimItem[]>('GET', '/Api/inventory');
    expect(a.body.map((i) => i.Code)).toEqual(['A-1', 'A-2', 'A-3']);
    expect(b.body).toEqual(a.body);
  });

  it('filters by code, siteId and pricelistId, and answers [] for an unknown code', async () => {
    expect((await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { code: 'A-2' } })).body.map((i) => i.Code)).toEqual(['A-2']);
    expect((await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { siteId: 1 } })).body.map((i) => i.Code)).toEqual(['A-1', 'A-3']);
    expect((await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { pricelistId: 2 } })).body.map((i) => i.Code)).toEqual(['A-3']);
    expect((await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { code: 'NOPE' } })).body).toEqual([]);
  });

  it('adds Preferences only when includePreferences is true, and answers 400 to a non-boolean', async () => {
    const without = await s.call<Array<Record<string, unknown>>>('GET', '/Api/Inventory/Get', { query: { code: 'A-1' } });
    const withPrefs = await s.call<Array<Record<string, unknown>>>('GET', '/Api/Inventory/Get', { query: { code: 'A-1', includePreferences: true } });
    expect(without.body[0]).not.toHaveProperty('Preferences');
    expect(withPrefs.body[0]).toHaveProperty('Preferences');
    expect((await s.call('GET', '/Api/Inventory/Get', { query: { includePreferences: 'maybe' } })).status).toBe(400);
    expect((await s.call('GET', '/Api/Inventory/Get', { query: { siteId: 'one' } })).status).toBe(400);
  });

  it('changes only the fields sent and logs the write', async () => {
    const res = await put(s, { InternalId: 0, Code: 'A-1', Stock: 7, Published: true });
    expect(res.status).toBe(200);
    expect(res.body.Success).toBe(true);
    expect(sim.state.items.get('A-1')?.item).toMatchObject({ Stock: 7, Published: true, Price: 100, Name: 'Mate de calabaza' });
    expect(sim.writes.at(-1)).toMatchObject({ code: 'A-1', op: 'update', fields: { Stock: 7, Published: true } });
  });

  it('accepts every field of the spec table at its limits', async () => {
    const res = await put(s, {
      InternalId: 0, Code: 'A-2', Stock: 999999, Price: 999999.99, OfferPrice: 0.01, Taxes: 100, ForSale: true, Published: false,
      IsItem: false, ParentItemId: 1, ParentItemCode: 'A-1', PriceListId: 3, PriceListCode: null, PriceMode: null,
      PrecioOriginal: '1234.50', DepStock: 'DEP-SUR', Properties: [{ Key: 'Color', Value: 'Añil' }], Name: 'Ñandú', Code2: 'X',
      ExternalReference: 'ERP-9', SiteId: 3, ExtendedWarranty: [{ Name: 'Garantía', Price: 10, Active: true, Cant: 2, Code: 'G' }],
    });
    expect(res.status).toBe(200);
    expect(sim.state.items.get('A-2')?.item).toMatchObject({ Stock: 999999, Name: 'Ñandú', SiteId: 3 });
  });

  it.each([
    ['a negative stock', { Stock: -1 }, 'Stock'],
    ['a stock above 999999', { Stock: 1_000_000 }, 'Stock'],
    ['a fractional stock', { Stock: 1.5 }, 'Stock'],
    ['a stock sent as text', { Stock: '5' }, 'Stock'],
    ['a zero price', { Price: 0 }, 'Price'],
    ['a price above 999999.99', { Price: 1_000_000 }, 'Price'],
    ['an offer price below 0.01', { OfferPrice: 0.001 }, 'OfferPrice'],
    ['taxes above 100', { Taxes: 100.5 }, 'Taxes'],
    ['a non-zero InternalId', { InternalId: 5 }, 'InternalId'],
    ['a PriceMode other than 0', { PriceMode: 1 }, 'PriceMode'],
    ['a PrecioOriginal that is not decimal text', { PrecioOriginal: '12,50' }, 'PrecioOriginal'],
    ['a DepStock that is not text', { DepStock: 3 }, 'DepStock'],
    ['malformed Properties', { Properties: [{ Key: 'a' }] }, 'Properties'],
    ['a field in the wrong letter case', { stock: 3 }, 'stock'],
  ])('answers 400 naming the field for %s, and changes nothing', async (_what, fields, field) => {
    const res = await put(s, { InternalId: 0, Code: 'A-1', ...fields });
    expect(res.status).toBe(400);
    expect(res.body.Message).toContain(field);
    expect(sim.state.items.get('A-1')?.item.Stock).toBe(10);
  });

  it('answers 400 when Code or InternalId is missing, or mode is not default', async () => {
    expect((await put(s, { InternalId: 0, Stock: 1 })).status).toBe(400);
    expect((await put(s, { Code: 'A-1', Stock: 1 })).status).toBe(400);
    expect((await put(s, { InternalId: 0, Code: 'A-1', Stock: 1 }, {})).status).toBe(400);
    expect((await put(s, { InternalId: 0, Code: 'A-1', Stock: 1 }, { mode: 'full' })).status).toBe(400);
    expect((await put(s, [{ InternalId: 0, Code: 'A-1' }])).status).toBe(400);
  });

  it('answers 400 to malformed JSON and 415 to a body without a JSON content type', async () => {
    const bad = await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, raw: '{"Code":', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    const text = await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, raw: '{"InternalId":0,"Code":"A-1"}', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });

  it('answers 404 to an update of an unknown Code and counts rejected writes', async () => {
    const before = sim.counters().rejectedWrites;
    expect((await put(s, { InternalId: 0, Code: 'NOPE', Stock: 1 })).status).toBe(404);
    await put(s, { InternalId: 0, Code: 'A-1', Stock: -1 });
    expect(sim.counters().rejectedWrites).toBe(before + 1);
  });

  it('creates an item with defaults for the optional fields and refuses a duplicate Code with 409', async () => {
    const created = await s.call<{ Success: boolean }>('POST', '/Api/Inventory', { body: { InternalId: 0, Code: 'NEW-1', Stock: 3, Name: 'Yerba' } });
    expect(created.status).toBe(200);
    expect(created.body.Success).toBe(true);
    expect(sim.state.items.get('NEW-1')?.item).toMatchObject({ Stock: 3, Name: 'Yerba', IsItem: true, ForSale: false, SiteId: 1, Properties: [] });
    expect(sim.writes.at(-1)).toMatchObject({ code: 'NEW-1', op: 'create' });
    expect((await s.call('POST', '/Api/Inventory', { body: { InternalId: 0, Code: 'NEW-1' } })).status).toBe(409);
    expect((await s.call('POST', '/Api/Inventory', { body: { InternalId: 0, Code: 'NEW-2', Price: 0 } })).status).toBe(400);
  });

  it('answers {Success:false} on HTTP 200 and applies nothing when successFalseRate is 1', async () => {
    sim.faults.set({ successFalseRate: 1 });
    try {
      const res = await put(s, { InternalId: 0, Code: 'A-1', Stock: 1 });
      expect(res.status).toBe(200);
      expect(res.body.Success).toBe(false);
      expect(sim.state.items.get('A-1')?.item.Stock).toBe(10);
      expect(sim.counters().faults.successFalse).toBeGreaterThanOrEqual(1);
    } finally {
      sim.faults.set({ successFalseRate: 0 });
    }
  });

  it('keeps UTF-8 names intact through a write and a read', async () => {
    await put(s, { InternalId: 0, Code: 'A-3', Name: 'Pañuelo de señora – edición “otoño”' });
    const res = await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { code: 'A-3' } });
    expect(res.body[0]?.Name).toBe('Pañuelo de señora – edición “otoño”');
  });

  it('answers 401 before validating when the hash is missing', async () => {
    expect((await call(sim.url, 'PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { Stock: -1 } })).status).toBe(401);
  });
});
