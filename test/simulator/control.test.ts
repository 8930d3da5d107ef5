import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CounterSnapshot, InventoryWrite, Sale, SaleUpdateEntry, SimItem } from '../../src/simulator/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

const putStock = (s: Session, code: string, stock: number) =>
  s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: code, Stock: stock } });

describe('simulator counters, write log and control API', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: 10, sales: 5, users: 2, seed: 7 });
    s = await session(sim.url);
  });
  afterAll(() => sim.close());

  it('counts requests per method and route template, logins, 401s and rejected writes', async () => {
    sim.resetCounters();
    await s.call('GET', '/api/inventory/get');
    await s.call('GET', '/Api/Inventory/Get/');
    await putStock(s, 'SKU-000001', 1);
    await putStock(s, 'SKU-000001', -1);
    await s.call('GET', '/Api/Sale/3');
    await call(sim.url, 'GET', '/Api/Sale/', { query: { hash: 'bad' } });
    await session(sim.url);
    const counters = await call<CounterSnapshot>(sim.url, 'GET', '/__control/counters');
    expect(counters.body).toMatchObject({
      requests: { 'GET /Api/Inventory/Get': 2, 'PUT /Api/Inventory': 2, 'GET /Api/Sale/{id}': 1, 'GET /Api/Sale': 1, 'GET /Api/Auth': 1 },
      total: 7,
      logins: 1,
      unauthorized: 1,
      rejectedWrites: 1,
      responses: { '200': 5, '400': 1, '401': 1 },
    });
    expect(sim.counters()).toEqual(counters.body);
  });

  it('serves the writes after a given seq, and emits each accepted write', async () => {
    const next = sim.events.next('inventory:write', (w) => w.code === 'SKU-000003');
    await putStock(s, 'SKU-000002', 5);
    const mark = sim.writes.at(-1)?.seq ?? 0;
    await putStock(s, 'SKU-000003', 6);
    await putStock(s, 'SKU-000004', 7);
    expect((await next).fields).toEqual({ Stock: 6 });
    const res = await call<InventoryWrite[]>(sim.url, 'GET', '/__control/writes', { query: { since: mark } });
    expect(res.body.map((w) => [w.code, w.fields])).toEqual([
      ['SKU-000003', { Stock: 6 }],
      ['SKU-000004', { Stock: 7 }],
    ]);
    expect(res.body[0]?.seq).toBe(mark + 1);
  });

  it('serves the sale updates after a given seq', async () => {
    await s.call('PUT', '/Api/Sale/2', { body: { Status: 3, TrackingCode: 'T-1' } });
    const res = await call<SaleUpdateEntry[]>(sim.url, 'GET', '/__control/sale-updates', { query: { since: 0 } });
    expect(res.body.at(-1)).toMatchObject({ saleId: 2, fields: { Status: 3, TrackingCode: 'T-1' } });
  });

  it('creates a sale from a partial body with POST /__control/sales', async () => {
    const res = await call<Sale>(sim.url, 'POST', '/__control/sales', {
      body: { Status: 1, UserData: { EMail: 'nueva@example.com' }, Items: [{ Code: 'SKU-000001', Quantity: 3 }] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ Id: 6, Status: 1, UserData: { EMail: 'nueva@example.com' }, SearchEmail: 'nueva@example.com' });
    expect(res.body.Items).toEqual([expect.objectContaining({ Code: 'SKU-000001', Quantity: 3, SaleId: 6 })]);
    const listed = await s.call<Sale[]>('GET', '/Api/Sale/', { query: { email: 'nueva@example.com' } });
    expect(listed.body.map((sale) => sale.Id)).toEqual([6]);
  });

  it('bulk upserts items with PUT /__control/items and refuses invalid ones with 400', async () => {
    const res = await call(sim.url, 'PUT', '/__control/items', {
      body: [
        { Code: 'SKU-000001', Stock: 999 },
        { Code: 'BULK-1', Stock: 4, Price: 9.5, Name: 'Alfajor de maicena' },
      ],
    });
    expect(res.status).toBe(200);
    const items = await call<SimItem[]>(sim.url, 'GET', '/__control/items', { query: { code: 'BULK-1' } });
    expect(items.body[0]).toMatchObject({ Code: 'BULK-1', Stock: 4, Price: 9.5 });
    expect(sim.state.items.get('SKU-000001')?.item.Stock).toBe(999);
    expect((await call(sim.url, 'PUT', '/__control/items', { body: [{ Code: 'BAD', Stock: -4 }] })).status).toBe(400);
    expect(sim.state.items.has('BAD')).toBe(false);
  });

  it('replaces all items with PUT /__control/items?replace=true', async () => {
    const other = await startSimulator({ port: 0, items: 5, sales: 0, users: 0 });
    try {
      await call(other.url, 'PUT', '/__control/items', { query: { replace: true }, body: { items: [{ Code: 'ONLY' }] } });
      expect([...other.state.items.keys()]).toEqual(['ONLY']);
    } finally {
      await other.close();
    }
  });

  it('links a variant to its parent by ParentItemCode and refuses a repeated Code', () => {
    const other = sim.state;
    sim.setItems([{ Code: 'PARENT' }, { Code: 'CHILD', IsItem: false, ParentItemCode: 'PARENT' }]);
    expect(other.items.get('CHILD')?.item.ParentItemId).toBe(other.items.get('PARENT')?.item.InternalId);
    expect(() => sim.setItems([{ Code: 'X' }, { Code: 'X' }])).toThrow(/duplicate Code/);
    expect([...other.items.keys()]).toEqual(['PARENT', 'CHILD']);
  });

  it('returns to the seeded data with empty logs after POST /__control/reset', async () => {
    const other = await startSimulator({ port: 0, items: 5, sales: 3, users: 1, seed: 3, baseTime: Date.UTC(2024, 0, 1) });
    try {
      const before = JSON.stringify(other.state.sales);
      const t = await session(other.url);
      await putStock(t, 'SKU-000001', 0);
      other.addSale();
      other.faults.set({ rate429: 0.5 });
      expect((await call(other.url, 'POST', '/__control/reset')).status).toBe(200);
      expect(other.writes).toHaveLength(0);
      expect(JSON.stringify(other.state.sales)).toBe(before);
      expect(other.faults.current.rate429).toBe(0);
      expect(other.counters().total).toBe(0);
      expect((await t.call('GET', '/Api/Sale/')).status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('keeps at most maxWrites log entries, dropping the oldest', async () => {
    const other = await startSimulator({ port: 0, items: 3, sales: 0, users: 0, maxWrites: 2 });
    try {
      const t = await session(other.url);
      for (const stock of [1, 2, 3]) await putStock(t, 'SKU-000001', stock);
      expect(other.writes.map((w) => w.fields.Stock)).toEqual([2, 3]);
    } finally {
      await other.close();
    }
  });

  it('summarises the store at GET /__control', async () => {
    const res = await call<Record<string, number>>(sim.url, 'GET', '/__control');
    expect(res.body).toMatchObject({ users: 2, clients: 10 });
    expect(res.body.items).toBe(sim.state.items.size);
  });
});
