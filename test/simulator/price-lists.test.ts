import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type SimItem, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;
type Failure = { Success: false; Message: string; Errors?: Array<{ Field: string; Value: unknown; Rule: string }> };

const LISTS = [
  { id: 1, code: 'RETAIL' },
  { id: 2, code: 'WHOLESALE' },
  { id: 5, code: 'OUTLET' },
];

describe('simulator with price lists (1:RETAIL, 2:WHOLESALE, 5:OUTLET)', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: [{ Code: 'PL-1', Stock: 10, Price: 100, OfferPrice: 120 }, { Code: 'PL-2', Stock: 4, Price: 50, OfferPrice: 60 }], sales: 0, users: 2, priceLists: LISTS });
  });

  beforeEach(async () => {
    sim.reset();
    s = await session(sim.url);
  });

  afterAll(async () => {
    await sim.close();
  });

  const put = (body: Record<string, unknown>) => s.call<Failure>('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, ...body } });
  const query = async (q: Record<string, string | number>) => (await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: q })).body;
  const prices = (code: string) => LISTS.map((l) => sim.state.prices?.priceOf(l.id, code)?.Price);

  it('prices every item on every list; a query without pricelistId answers the default list', async () => {
    expect(prices('PL-1')).toEqual([100, 100, 100]);
    expect(await query({ code: 'PL-1' })).toEqual([expect.objectContaining({ Price: 100, OfferPrice: 120, PriceListId: 1, PriceListCode: 'RETAIL' })]);
  });

  it('a PUT with PriceListCode changes that list only', async () => {
    expect((await put({ Code: 'PL-1', PriceListCode: 'WHOLESALE', Price: 80, OfferPrice: 90 })).status).toBe(200);
    expect(prices('PL-1')).toEqual([100, 80, 100]);
    expect(sim.state.prices?.priceOf(2, 'PL-1')).toEqual({ Price: 80, OfferPrice: 90 });
    // The item's own price (products, sale lines) is the default list's.
    expect(sim.state.items.get('PL-1')?.item).toMatchObject({ Price: 100, PriceListId: 1, PriceListCode: 'RETAIL' });
  });

  it('a PUT with PriceListId changes that list only, and its other fields change the item', async () => {
    expect((await put({ Code: 'PL-2', PriceListId: 5, Price: 30, Stock: 2 })).status).toBe(200);
    expect(prices('PL-2')).toEqual([50, 50, 30]);
    expect(sim.state.items.get('PL-2')?.item.Stock).toBe(2);
  });

  it('a PUT naming no list changes the default list, and the item\'s own price with it', async () => {
    expect((await put({ Code: 'PL-2', Price: 55 })).status).toBe(200);
    expect(prices('PL-2')).toEqual([55, 50, 50]);
    expect(sim.state.items.get('PL-2')?.item.Price).toBe(55);
  });

  it('a GET with pricelistId answers that list\'s prices for every item', async () => {
    await put({ Code: 'PL-1', PriceListId: 2, Price: 70, OfferPrice: 75 });
    await put({ Code: 'PL-2', PriceListCode: 'WHOLESALE', Price: 40 });
    const wholesale = await query({ pricelistId: 2 });
    expect(wholesale.map((i) => [i.Code, i.Price, i.OfferPrice, i.PriceListId, i.PriceListCode])).toEqual([
      ['PL-1', 70, 75, 2, 'WHOLESALE'],
      ['PL-2', 40, 60, 2, 'WHOLESALE'],
    ]);
    expect((await query({ pricelistId: 1 })).map((i) => i.Price)).toEqual([100, 50]);
    expect((await query({ pricelistId: 5, code: 'PL-1' })).map((i) => [i.Price, i.PriceListCode])).toEqual([[100, 'OUTLET']]);
  });

  it('refuses an unknown price list with a 400 naming the field, the value and the lists, and changes nothing', async () => {
    const byCode = await put({ Code: 'PL-1', PriceListCode: 'VIP', Price: 1 });
    expect(byCode.status).toBe(400);
    expect(byCode.body.Errors).toEqual([{ Field: 'PriceListCode', Value: 'VIP', Rule: 'a price list of the store (1:RETAIL, 2:WHOLESALE, 5:OUTLET)' }]);
    expect(byCode.body.Message).toContain('PL-1');
    const byId = await put({ Code: 'PL-1', PriceListId: 3, Price: 1 });
    expect(byId.status).toBe(400);
    expect(byId.body.Errors?.[0]).toMatchObject({ Field: 'PriceListId', Value: 3 });
    const disagreeing = await put({ Code: 'PL-1', PriceListId: 1, PriceListCode: 'WHOLESALE', Price: 1 });
    expect(disagreeing.status).toBe(400);
    expect(disagreeing.body.Errors?.[0]).toMatchObject({ Field: 'PriceListCode', Value: 'WHOLESALE', Rule: 'the code of PriceListId 1 (RETAIL)' });
    const get = await s.call<Failure>('GET', '/Api/Inventory/Get', { query: { pricelistId: 4 } });
    expect(get.status).toBe(400);
    expect(get.body.Message).toBe("unknown pricelistId 4: the store's price lists are 1:RETAIL, 2:WHOLESALE, 5:OUTLET");
    const post = await s.call<Failure>('POST', '/Api/Inventory', { body: { InternalId: 0, Code: 'PL-NEW', PriceListCode: 'VIP', Price: 1 } });
    expect(post.status).toBe(400);
    expect(sim.state.items.has('PL-NEW')).toBe(false);
    expect(prices('PL-1')).toEqual([100, 100, 100]);
    expect(sim.writes).toEqual([]);
  });

  it('a POST prices the new item on every list', async () => {
    expect((await s.call('POST', '/Api/Inventory', { body: { InternalId: 0, Code: 'PL-NEW', Price: 9, PriceListCode: 'OUTLET' } })).status).toBe(200);
    expect(prices('PL-NEW')).toEqual([9, 9, 9]);
  });

  it('the control API lists the price lists, reads a list\'s prices and upserts them', async () => {
    expect((await call(sim.url, 'GET', '/__control/price-lists')).body).toEqual(LISTS);
    expect((await call(sim.url, 'PUT', '/__control/items', { body: [{ Code: 'PL-1', PriceListId: 5, Price: 11 }] })).status).toBe(200);
    const read = await call<SimItem[]>(sim.url, 'GET', '/__control/items', { query: { code: 'PL-1', pricelistId: 5 } });
    expect(read.body).toEqual([expect.objectContaining({ Code: 'PL-1', Price: 11, PriceListId: 5, PriceListCode: 'OUTLET' })]);
    expect((await call(sim.url, 'GET', '/__control/items', { query: { pricelistId: 9 } })).status).toBe(400);
  });
});

describe('simulator with price lists and items per site together', () => {
  it('keeps a list\'s prices the same on every site, each site its own stock', async () => {
    const sim = await startSimulator({ port: 0, items: [{ Code: 'B-1', Stock: 5, Price: 10 }], sales: 0, users: 1, itemsPerSite: [1, 2], priceLists: LISTS });
    try {
      const s = await session(sim.url);
      await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'B-1', SiteId: 2, PriceListCode: 'WHOLESALE', Price: 8, Stock: 1 } });
      const answer = await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { pricelistId: 2 } });
      expect(answer.body.map((i) => [i.SiteId, i.Stock, i.Price])).toEqual([[1, 5, 8], [2, 1, 8]]);
    } finally {
      await sim.close();
    }
  });
});

describe('simulator price lists, seeded and at start', () => {
  it('prices each later list of the seeded items 10 % below the one before', async () => {
    const sim = await startSimulator({ port: 0, items: 5, sales: 0, users: 1, priceLists: LISTS });
    try {
      for (const { item } of sim.state.items.values()) {
        const [retail, wholesale, outlet] = LISTS.map((l) => sim.state.prices?.priceOf(l.id, item.Code)?.Price);
        expect(retail).toBe(item.Price);
        expect(wholesale).toBe(Math.round(item.Price * 0.9 * 100) / 100);
        expect(outlet).toBe(Math.round(item.Price * 0.81 * 100) / 100);
      }
    } finally {
      await sim.close();
    }
  });

  it('gives generated users and clients one of the store\'s lists', async () => {
    const sim = await startSimulator({ port: 0, items: 1, sales: 0, users: 20, clients: 10, priceLists: [{ id: 7, code: 'A' }, { id: 9, code: 'B' }] });
    try {
      const users = [...sim.state.users.values()].map((u) => u.user.PriceListId);
      const clients = [...sim.state.clients.values()].map((c) => c.PriceListId);
      expect(new Set([...users, ...clients])).toEqual(new Set([7, 9]));
    } finally {
      await sim.close();
    }
  });

  it('refuses a repeated id or code at start', async () => {
    await expect(startSimulator({ port: 0, priceLists: [{ id: 1, code: 'A' }, { id: 1, code: 'B' }] })).rejects.toThrow('priceLists: id 1 is repeated');
    await expect(startSimulator({ port: 0, priceLists: [{ id: 1, code: 'A' }, { id: 2, code: 'A' }] })).rejects.toThrow('priceLists: code A is repeated');
  });
});

describe('simulator without price lists (the default)', () => {
  it('keeps one price per item: pricelistId filters by the item\'s own list, a PUT sets PriceListCode on the item', async () => {
    const sim = await startSimulator({ port: 0, items: [{ Code: 'N-1', Price: 5, PriceListId: 1 }, { Code: 'N-2', Price: 6, PriceListId: 2 }], sales: 0, users: 1 });
    try {
      const s = await session(sim.url);
      const two = await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { pricelistId: 2 } });
      expect(two.body.map((i) => i.Code)).toEqual(['N-2']);
      const put = await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'N-1', PriceListCode: 'ANY', Price: 7 } });
      expect(put.status).toBe(200);
      expect(sim.state.items.get('N-1')?.item).toMatchObject({ PriceListCode: 'ANY', Price: 7 });
    } finally {
      await sim.close();
    }
  });
});
