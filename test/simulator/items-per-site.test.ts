import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type SimItem, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

describe('simulator with items per site (itemsPerSite: [1, 2, 3])', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: [{ Code: 'PS-1', Stock: 10, Price: 100, ForSale: true, Published: true }, { Code: 'PS-2', Stock: 4, Price: 50 }], sales: 0, users: 2, itemsPerSite: [1, 2, 3] });
  });

  beforeEach(async () => {
    sim.reset();
    s = await session(sim.url);
  });

  afterAll(async () => {
    await sim.close();
  });

  const copy = (code: string, siteId: number): SimItem | undefined => sim.state.itemOn(code, siteId)?.item;
  const query = async (q: Record<string, string | number>) => (await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: q })).body;

  it('holds every item on each site, each copy with the SiteId of its site', async () => {
    const all = await query({});
    expect(all.map((i) => `${i.Code}@${i.SiteId}`)).toEqual(['PS-1@1', 'PS-2@1', 'PS-1@2', 'PS-2@2', 'PS-1@3', 'PS-2@3']);
    // A Code keeps one InternalId on every site.
    expect(new Set(all.filter((i) => i.Code === 'PS-1').map((i) => i.InternalId)).size).toBe(1);
  });

  it('a PUT with SiteId changes that site\'s copy only', async () => {
    const put = await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'PS-1', SiteId: 2, Stock: 3, ForSale: false } });
    expect(put.status).toBe(200);
    expect(copy('PS-1', 2)).toMatchObject({ Stock: 3, ForSale: false, SiteId: 2 });
    expect(copy('PS-1', 1)).toMatchObject({ Stock: 10, ForSale: true, SiteId: 1 });
    expect(copy('PS-1', 3)).toMatchObject({ Stock: 10, ForSale: true, SiteId: 3 });
    expect(sim.writes.at(-1)).toMatchObject({ code: 'PS-1', op: 'update', fields: { SiteId: 2, Stock: 3, ForSale: false } });
  });

  it('a PUT without SiteId changes the first site\'s copy', async () => {
    await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'PS-2', Stock: 7 } });
    expect([1, 2, 3].map((site) => copy('PS-2', site)?.Stock)).toEqual([7, 4, 4]);
  });

  it('a GET with siteId reads that site\'s copy, with code or without', async () => {
    await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'PS-1', SiteId: 3, Stock: 1, Published: false } });
    expect(await query({ code: 'PS-1', siteId: 3 })).toEqual([expect.objectContaining({ Code: 'PS-1', SiteId: 3, Stock: 1, Published: false })]);
    expect(await query({ code: 'PS-1', siteId: 1 })).toEqual([expect.objectContaining({ Code: 'PS-1', SiteId: 1, Stock: 10, Published: true })]);
    expect((await query({ siteId: 3 })).map((i) => [i.Code, i.Stock])).toEqual([['PS-1', 1], ['PS-2', 4]]);
    // Without siteId the query reads every site: the same Code once per site.
    expect((await query({ code: 'PS-1' })).map((i) => [i.SiteId, i.Stock])).toEqual([[1, 10], [2, 10], [3, 1]]);
    // A site the store does not have holds nothing.
    expect(await query({ siteId: 9 })).toEqual([]);
  });

  it('answers 404 naming the site when the PUT names a site that does not hold the item', async () => {
    const put = await s.call<{ Message: string }>('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'PS-1', SiteId: 9, Stock: 1 } });
    expect(put.status).toBe(404);
    expect(put.body.Message).toBe('Product not found: PS-1 on site 9');
    expect(sim.writes).toEqual([]);
  });

  it('a POST creates the item on every site', async () => {
    const post = await s.call('POST', '/Api/Inventory', { body: { InternalId: 0, Code: 'PS-NEW', Stock: 5, SiteId: 2 } });
    expect(post.status).toBe(200);
    expect((await query({ code: 'PS-NEW' })).map((i) => [i.SiteId, i.Stock])).toEqual([[1, 5], [2, 5], [3, 5]]);
  });

  it('the control API reads a site\'s copy and upserts it', async () => {
    const put = await call(sim.url, 'PUT', '/__control/items', { body: [{ Code: 'PS-2', SiteId: 3, Stock: 33 }] });
    expect(put.status).toBe(200);
    const read = await call<SimItem[]>(sim.url, 'GET', '/__control/items', { query: { code: 'PS-2', siteId: 3 } });
    expect(read.body).toEqual([expect.objectContaining({ Code: 'PS-2', SiteId: 3, Stock: 33 })]);
    expect(copy('PS-2', 1)?.Stock).toBe(4);
    const bad = await call<{ Message: string }>(sim.url, 'PUT', '/__control/items', { body: [{ Code: 'PS-2', SiteId: 8, Stock: 1 }] });
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toContain('SiteId 8 of PS-2');
  });
});

describe('simulator with items per site, seeded', () => {
  it('gives the copies on the other sites their own stock and flags, the same for the same seed', async () => {
    const sims = await Promise.all([1, 2].map(() => startSimulator({ port: 0, items: 30, sales: 0, users: 1, itemsPerSite: [1, 2] })));
    try {
      const stocks = sims.map((sim) => [...sim.state.heldItems(2)].map((stored) => stored.item.Stock));
      expect(stocks[0]).toEqual(stocks[1]);
      const first = sims[0]!;
      const differing = [...first.state.items.values()].filter(({ item }) => first.state.itemOn(item.Code, 2)?.item.Stock !== item.Stock);
      expect(differing.length).toBeGreaterThan(15);
    } finally {
      await Promise.all(sims.map((sim) => sim.close()));
    }
  });

  it('refuses a repeated or non-positive site id at start', async () => {
    await expect(startSimulator({ port: 0, itemsPerSite: [1, 1] })).rejects.toThrow('itemsPerSite: site id 1 is repeated');
    await expect(startSimulator({ port: 0, itemsPerSite: [0] })).rejects.toThrow('itemsPerSite: site id 0 must be a positive integer');
  });
});

describe('simulator without items per site (the default)', () => {
  it('keeps one record per Code: a PUT with SiteId moves the item, a GET with siteId filters by it', async () => {
    const sim = await startSimulator({ port: 0, items: [{ Code: 'D-1', Stock: 2 }, { Code: 'D-2', Stock: 3 }], sales: 0, users: 1 });
    try {
      const s = await session(sim.url);
      await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'D-1', SiteId: 2, Stock: 9 } });
      expect(sim.state.items.get('D-1')?.item).toMatchObject({ SiteId: 2, Stock: 9 });
      const onTwo = await s.call<SimItem[]>('GET', '/Api/Inventory/Get', { query: { siteId: 2 } });
      expect(onTwo.body.map((i) => i.Code)).toEqual(['D-1']);
      const all = await s.call<SimItem[]>('GET', '/Api/Inventory/Get');
      expect(all.body.map((i) => i.Code)).toEqual(['D-1', 'D-2']);
    } finally {
      await sim.close();
    }
  });
});
