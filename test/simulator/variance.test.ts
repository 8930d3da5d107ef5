import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;
type Raw = Record<string, unknown>;

describe('simulator variance settings', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: 30, sales: 45, users: 2, seed: 11 });
    s = await session(sim.url);
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.faults.set({ saleLimitCap: 0, looseTypes: false, malformedSaleIds: [], malformedItemCodes: [], ignoreOffset: false });
  });

  const sales = async (query: Record<string, number> = {}): Promise<Raw[]> => (await s.call<Raw[]>('GET', '/Api/Sale/', { query })).body;
  const items = async (): Promise<Raw[]> => (await s.call<Raw[]>('GET', '/Api/Inventory/Get')).body;

  it('saleLimitCap answers at most N sales a page whatever limit asks, offset still applied', async () => {
    sim.faults.set({ saleLimitCap: 20 });
    expect(await sales({ limit: 100 })).toHaveLength(20);
    expect(await sales()).toHaveLength(20);
    expect(await sales({ limit: 5 })).toHaveLength(5);
    const last = await sales({ limit: 100, offset: 40 });
    expect(last.map((sale) => sale.Id)).toEqual([41, 42, 43, 44, 45]);
  });

  it('looseTypes sends sales with numbers as text (decimal point and comma), loose booleans, nulls and an extra field', async () => {
    sim.faults.set({ looseTypes: true });
    const loose = await sales();
    const stored = sim.state.sales.map((entry) => entry.sale);
    expect(loose).toHaveLength(stored.length);
    const totals = loose.map((sale) => sale.Total);
    expect(totals.some((total) => typeof total === 'string' && total.includes(','))).toBe(true);
    expect(totals.some((total) => typeof total === 'string' && total.includes('.'))).toBe(true);
    expect(loose.some((sale) => typeof sale.Id === 'string')).toBe(true);
    const access = loose.map((sale) => (sale.UserData as Raw).Access);
    expect(access.every((value) => [0, 1, '0', '1', 'true', 'false'].includes(value as never))).toBe(true);
    expect(loose.every((sale) => 'ChannelData' in sale)).toBe(true);
    // The stored sales stay typed.
    expect(stored.every((sale) => typeof sale.Total === 'number')).toBe(true);
    const one = await s.call<Raw>('GET', `/Api/Sale/${stored[0]!.Id}`);
    expect(one.body).toHaveProperty('ChannelData');
  });

  it('looseTypes sends items with Taxes as an object or an array, DepStock as an object, flags as 0/1 or text', async () => {
    sim.faults.set({ looseTypes: true });
    const loose = await items();
    expect(loose.some((item) => Array.isArray(item.Taxes))).toBe(true);
    expect(loose.some((item) => item.Taxes !== null && typeof item.Taxes === 'object' && !Array.isArray(item.Taxes))).toBe(true);
    expect(loose.filter((item) => item.DepStock !== null).every((item) => typeof (item.DepStock as Raw).Code === 'string')).toBe(true);
    expect(loose.every((item) => typeof item.ForSale !== 'boolean')).toBe(true);
    expect(loose.every((item) => typeof item.Code === 'string')).toBe(true);
  });

  it('looseTypes sends users with loose booleans and numbers as text', async () => {
    sim.faults.set({ looseTypes: true });
    const users = (await s.call<Raw[]>('GET', '/Api/User', { query: { fields: 'None', term: '' } })).body;
    expect(users).toHaveLength(2);
    expect(users.every((user) => typeof user.Access !== 'boolean' && 'ChannelData' in user)).toBe(true);
    expect(users.some((user) => typeof user.SiteId === 'string' || typeof user.ProfileId === 'string' || typeof user.Id === 'string')).toBe(true);
  });

  it('malformedSaleIds and malformedItemCodes break one field of just those records', async () => {
    const code = [...sim.state.items.keys()][3]!;
    sim.faults.set({ malformedSaleIds: [7], malformedItemCodes: [code] });
    const listed = await sales();
    expect(listed.find((sale) => sale.Id === 7)!.Total).toEqual({ Amount: sim.state.salesById.get(7)!.sale.Total });
    expect(listed.filter((sale) => typeof sale.Total !== 'number').map((sale) => sale.Id)).toEqual([7]);
    const read = await items();
    expect(read.filter((item) => item.Price === 'consultar').map((item) => item.Code)).toEqual([code]);
  });
});
