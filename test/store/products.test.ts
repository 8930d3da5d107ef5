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
    const byTerm = await fixture.client.products.list({ term: 'SKU-00001' });
    expect(byTerm.length).toBeGreaterThan(0);
    expect(byTerm.every((p) => String(p.Code).startsWith('SKU-00001'))).toBe(true);

    const descending = await fixture.client.products.list({ order: 'Code', ascending: false, fields: 'Code,Price' });
    expect(descending[0]).toEqual({ Code: 'SKU-000030', Price: expect.any(Number) });

    const active = await fixture.client.products.list({ status: 'active', mode: 'full' });
    expect(active.every((p) => p.Status === 'active')).toBe(true);

    const anded = await fixture.client.products.list({ filtersAnd: 'Code:SKU-000002,Status:active' });
    expect(anded.length).toBeLessThanOrEqual(1);
    const ored = await fixture.client.products.list({ filtersOr: 'Code:SKU-000002,Code:SKU-000003' });
    expect(ored.map((p) => p.Code).sort()).toEqual(['SKU-000002', 'SKU-000003']);
  });

  it('sends parentId and the creation date range', async () => {
    const all = await fixture.client.products.list();
    const child = all.find((p) => typeof p.ParentId === 'number');
    if (child) {
      const children = await fixture.client.products.list({ parentId: child.ParentId as number });
      expect(children.every((p) => p.ParentId === child.ParentId)).toBe(true);
    }
    const none = await fixture.client.products.list({ creationDateFrom: new Date(Date.now() + 10 * 86_400_000) });
    expect(none).toEqual([]);
    const every = await fixture.client.products.list({ creationDateFrom: '2000-01-01', creationDateTo: new Date() });
    expect(every).toHaveLength(30);
  });
});
