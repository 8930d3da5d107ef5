import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture;

beforeAll(async () => {
  fixture = await storeFixture({ items: 30 });
});

afterAll(async () => {
  await fixture.close();
});

describe('products.list', () => {
  it('lists every product without filters', async () => {
    expect(await fixture.client.products.list()).toHaveLength(30);
  });

  it('sends term, order, ascending, status, fields and the AND/OR filters', async () => {
    const all = await fixture.client.products.list();
    const codes = (products: Array<{ Code?: unknown }>): string[] => products.map((p) => String(p.Code)).sort();

    const byTerm = await fixture.client.products.list({ term: 'SKU-00001' });
    expect(codes(byTerm)).toEqual(Array.from({ length: 10 }, (_, i) => `SKU-0000${10 + i}`));

    const descending = await fixture.client.products.list({ order: 'Code', ascending: false, fields: 'Code,Price' });
    expect(descending[0]).toEqual({ Code: 'SKU-000030', Price: expect.any(Number) });

    // The seeded catalogue has active and other products, so the status filter has something to leave out.
    const activeCodes = codes(all.filter((p) => p.Status === 'active'));
    expect(activeCodes.length).toBeGreaterThan(0);
    expect(activeCodes.length).toBeLessThan(all.length);
    const active = await fixture.client.products.list({ status: 'active', mode: 'full' });
    expect(codes(active)).toEqual(activeCodes);

    const activeCode = activeCodes[0]!;
    const otherStatus = String(all.find((p) => p.Status !== 'active')!.Status);
    expect(codes(await fixture.client.products.list({ filtersAnd: `Code:${activeCode},Status:active` }))).toEqual([activeCode]);
    expect(await fixture.client.products.list({ filtersAnd: `Code:${activeCode},Status:${otherStatus}` })).toEqual([]);
    const ored = await fixture.client.products.list({ filtersOr: 'Code:SKU-000002,Code:SKU-000003' });
    expect(codes(ored)).toEqual(['SKU-000002', 'SKU-000003']);
  });

  it('sends parentId and the creation date range', async () => {
    const all = await fixture.client.products.list();
    // The seed makes about a fifth of the items parents with variants.
    const child = all.find((p) => typeof p.ParentId === 'number');
    expect(child).toBeDefined();
    const siblings = all.filter((p) => p.ParentId === child!.ParentId).map((p) => p.Code);
    const children = await fixture.client.products.list({ parentId: child!.ParentId as number });
    expect(children.map((p) => p.Code)).toEqual(siblings);
    expect(children.length).toBeLessThan(all.length);
    const none = await fixture.client.products.list({ creationDateFrom: new Date(Date.now() + 10 * 86_400_000) });
    expect(none).toEqual([]);
    const every = await fixture.client.products.list({ creationDateFrom: '2000-01-01', creationDateTo: new Date() });
    expect(every).toHaveLength(30);
  });
});
