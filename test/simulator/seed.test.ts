import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Simulator, startSimulator } from '../../src/simulator/index.js';

const BASE = Date.UTC(2024, 5, 1);

function snapshot(sim: Simulator): string {
  const { state } = sim;
  return JSON.stringify({
    items: [...state.items.values()],
    sales: state.sales,
    users: [...state.users.values()],
    clients: [...state.clients.values()],
  });
}

describe('simulator seeded data', () => {
  let a: Simulator;
  let b: Simulator;
  let c: Simulator;

  beforeAll(async () => {
    [a, b, c] = await Promise.all([
      startSimulator({ port: 0, items: 300, sales: 60, users: 10, seed: 42, baseTime: BASE }),
      startSimulator({ port: 0, items: 300, sales: 60, users: 10, seed: 42, baseTime: BASE }),
      startSimulator({ port: 0, items: 300, sales: 60, users: 10, seed: 43, baseTime: BASE }),
    ]);
  });
  afterAll(() => Promise.all([a, b, c].map((sim) => sim.close())));

  it('generates identical data for the same seed and baseTime', () => {
    expect(snapshot(a)).toBe(snapshot(b));
  });

  it('generates different data for another seed', () => {
    expect(snapshot(a)).not.toBe(snapshot(c));
  });

  it('restores exactly the seeded data on reset after a sale was added', async () => {
    const d = await startSimulator({ port: 0, items: 300, sales: 60, users: 10, seed: 42, baseTime: BASE });
    try {
      d.addSale();
      d.reset();
      expect(snapshot(d)).toBe(snapshot(a));
    } finally {
      await d.close();
    }
  });

  it('numbers item codes SKU-000001 upwards and links variants to their parents', () => {
    const items = [...a.state.items.values()].map((s) => s.item);
    expect(items[0]?.Code).toBe('SKU-000001');
    expect(items.at(-1)?.Code).toBe('SKU-000300');
    const variants = items.filter((i) => !i.IsItem);
    expect(variants.length).toBeGreaterThan(10);
    for (const v of variants) {
      const parent = a.state.items.get(v.ParentItemCode ?? '')?.item;
      expect(parent?.InternalId).toBe(v.ParentItemId);
      expect(parent?.IsItem).toBe(true);
    }
  });

  it('spreads items over sites 1 to 3, price lists and warehouses, with accented Spanish names', () => {
    const items = [...a.state.items.values()].map((s) => s.item);
    expect(new Set(items.map((i) => i.SiteId))).toEqual(new Set([1, 2, 3]));
    expect(new Set(items.map((i) => i.PriceListId)).size).toBeGreaterThan(1);
    expect(new Set(items.map((i) => i.DepStock)).size).toBeGreaterThan(1);
    expect(items.some((i) => /[áéíóúñÑ]/.test(i.Name))).toBe(true);
    expect(items.every((i) => i.Properties.length > 0)).toBe(true);
  });

  it('gives every sale its nested objects, existing item codes and a past creation date', () => {
    for (const { sale, createdAtMs } of a.state.sales) {
      expect(sale.Items.length).toBeGreaterThan(0);
      for (const line of sale.Items) expect(a.state.items.has(line.Code)).toBe(true);
      expect(sale.PayMethod.Id).toBe(sale.PayMethodId);
      expect(sale.Currency.Code).toBe('ARS');
      expect(sale.UserData.EMail).toContain('@');
      expect(sale.BillingAddress.Type).toBe(1);
      expect(createdAtMs).toBeLessThan(BASE);
    }
    expect(new Set(a.state.sales.map((s) => s.sale.Status)).size).toBeGreaterThan(3);
  });

  it('generates 100000 items with codes up to SKU-100000', async () => {
    const big = await startSimulator({ port: 0, items: 100_000, sales: 10, users: 2, clients: 0 });
    try {
      expect(big.state.items.size).toBe(100_000);
      expect(big.state.items.has('SKU-100000')).toBe(true);
    } finally {
      await big.close();
    }
  });
});
