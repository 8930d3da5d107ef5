import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Product, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

describe('simulator products', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({
      port: 0,
      sales: 0,
      users: 0,
      items: [
        { Code: 'P-1', Name: 'Campera de cuero', Price: 500, Published: true },
        { Code: 'P-1-M', Name: 'Campera de cuero - M', Price: 500, Published: true, IsItem: false, ParentItemId: 1, ParentItemCode: 'P-1' },
        { Code: 'P-1-L', Name: 'Campera de cuero - L', Price: 520, Published: false, IsItem: false, ParentItemId: 1, ParentItemCode: 'P-1' },
        { Code: 'P-2', Name: 'Pantalón térmico', Price: 300, Published: true, SiteId: 2 },
      ],
    });
    s = await session(sim.url);
  });
  afterAll(() => sim.close());

  const products = async (query: Record<string, string | number | boolean> = {}): Promise<Product[]> => {
    const res = await s.call<Product[]>('GET', '/Api/product', { query });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('projects every item as a product in ascending Id order', async () => {
    const all = await products();
    expect(all.map((p) => p.Code)).toEqual(['P-1', 'P-1-M', 'P-1-L', 'P-2']);
    expect(all[1]).toMatchObject({ Id: 2, ParentId: 1, IsItem: false, Status: 'active' });
    expect(all[0]?.CreationDate).toMatch(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/);
  });

  it('searches the term in name and code without regard to accents or case', async () => {
    expect((await products({ term: 'PANTALON' })).map((p) => p.Code)).toEqual(['P-2']);
    expect((await products({ term: 'p-1-' })).map((p) => p.Code)).toEqual(['P-1-M', 'P-1-L']);
  });

  it('filters by parentId and status', async () => {
    expect((await products({ parentId: 1 })).map((p) => p.Code)).toEqual(['P-1-M', 'P-1-L']);
    expect((await products({ status: 'inactive' })).map((p) => p.Code)).toEqual(['P-1-L']);
  });

  it('sorts by the order field, descending when ascending is false', async () => {
    expect((await products({ order: 'price', ascending: false })).map((p) => p.Price)).toEqual([520, 500, 500, 300]);
  });

  it('returns only the requested fields', async () => {
    expect((await products({ fields: 'Code,Price', term: 'P-2' }))).toEqual([{ Code: 'P-2', Price: 300 }]);
  });

  it('applies filtersand as all-of and filtersor as any-of Field:value lists', async () => {
    expect((await products({ filtersand: 'Status:active,IsItem:false' })).map((p) => p.Code)).toEqual(['P-1-M']);
    expect((await products({ filtersor: 'Code:P-2,Price:520' })).map((p) => p.Code)).toEqual(['P-1-L', 'P-2']);
  });

  it('filters by creation date range', async () => {
    expect(await products({ creationDateFrom: '2999-01-01' })).toEqual([]);
    expect((await products({ creationDateTo: '2999-01-01' })).length).toBe(4);
  });

  it.each([
    ['order', 'Colour'],
    ['fields', 'Code,Nope'],
    ['filtersand', 'Status'],
    ['creationDateFrom', '01/01/2024'],
    ['ascending', 'sometimes'],
    ['parentId', 'x'],
  ])('answers 400 to a malformed %s', async (name, value) => {
    expect((await s.call('GET', '/Api/product', { query: { [name]: value } })).status).toBe(400);
  });
});
