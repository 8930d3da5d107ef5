import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, session } from './http.js';

describe('simulator stock and sales', () => {
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: [{ Code: 'ST-1', Stock: 10, Price: 10 }, { Code: 'ST-2', Stock: 1, Price: 10 }], sales: 0, users: 2 });
  });

  afterAll(async () => {
    await sim.close();
  });

  const stock = (code: string): number | undefined => sim.state.items.get(code)?.item.Stock;

  it('takes a placed sale\'s units off the item, as a hosted store does, and gives them back when it is cancelled', async () => {
    const created = await call<{ Id: number }>(sim.url, 'POST', '/__control/sales', { body: { Status: 1, SiteId: 1, Items: [{ Code: 'ST-1', Quantity: 3 }] } });
    expect(created.status).toBe(200);
    expect(stock('ST-1')).toBe(7);
    const s = await session(sim.url);
    expect((await s.call('PUT', `/Api/Sale/${created.body.Id}`, { body: { Id: created.body.Id, Status: 2 } })).status).toBe(200);
    expect(stock('ST-1')).toBe(7);
    expect((await s.call('PUT', `/Api/Sale/${created.body.Id}`, { body: { Id: created.body.Id, Status: -2 } })).status).toBe(200);
    expect(stock('ST-1')).toBe(10);
    // Cancelled twice gives nothing back twice.
    await s.call('PUT', `/Api/Sale/${created.body.Id}`, { body: { Id: created.body.Id, Status: -1 } });
    expect(stock('ST-1')).toBe(10);
    // No write of the inventory API is logged: the store changed its own stock.
    expect(sim.writes).toEqual([]);
  });

  it('never goes below zero, and takes nothing for a sale added already cancelled', () => {
    sim.addSale({ Status: 1, SiteId: 1, Items: [{ Code: 'ST-2', Quantity: 4 }] });
    expect(stock('ST-2')).toBe(0);
    sim.addSale({ Status: -2, SiteId: 1, Items: [{ Code: 'ST-1', Quantity: 4 }] });
    expect(stock('ST-1')).toBe(10);
  });
});

describe('simulator stock and sales with items per site', () => {
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: [{ Code: 'PS-1', Stock: 10, Price: 10 }], sales: 0, users: 2, itemsPerSite: [1, 2, 3] });
  });

  afterAll(async () => {
    await sim.close();
  });

  const stocks = (code: string): Array<number | undefined> => [1, 2, 3].map((site) => sim.state.itemOn(code, site)?.item.Stock);

  it('a sale on a site lowers that site\'s stock only, and a cancelled one gives it back there', async () => {
    const sale = sim.addSale({ Status: 1, SiteId: 2, Items: [{ Code: 'PS-1', Quantity: 4 }] });
    expect(stocks('PS-1')).toEqual([10, 6, 10]);
    const s = await session(sim.url);
    const put = await s.call('PUT', `/Api/Sale/${sale.Id}`, { body: { Id: sale.Id, Status: -2 } });
    expect(put.status).toBe(200);
    expect(stocks('PS-1')).toEqual([10, 10, 10]);
    // A sale on a site that does not hold the item takes nothing anywhere.
    sim.addSale({ Status: 1, SiteId: 7, Items: [{ Code: 'PS-1', Quantity: 2 }] });
    expect(stocks('PS-1')).toEqual([10, 10, 10]);
  });
});
