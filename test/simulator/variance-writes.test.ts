import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

describe('simulator variance: replacing sale PUTs and non-JSON write bodies', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: 3, sales: 0, users: 1, clients: 1 });
  });
  beforeEach(async () => {
    sim.reset();
    s = await session(sim.url);
    sim.addSale({ Id: 7, Status: 1, StatusText: 'Confirmada', OperationStatus: 4, TrackingCode: 'TN7', Obeservations: 'Ring twice', Message: 'Hi' });
  });
  afterAll(() => sim.close());

  it('merges a sale PUT by default: fields not sent keep their values', async () => {
    expect((await s.call('PUT', '/Api/Sale/7', { body: { Id: 7, Message: 'Thanks' } })).status).toBe(200);
    expect(sim.state.salesById.get(7)!.sale).toMatchObject({ Status: 1, StatusText: 'Confirmada', OperationStatus: 4, TrackingCode: 'TN7', Obeservations: 'Ring twice', Message: 'Thanks' });
  });

  it('empties every update field a sale PUT did not carry under replacingSalePut (0 for integers, "" for texts)', async () => {
    sim.faults.set({ replacingSalePut: true });
    expect((await s.call('PUT', '/Api/Sale/7', { body: { Id: 7, TrackingCode: 'TN8' } })).status).toBe(200);
    expect(sim.state.salesById.get(7)!.sale).toMatchObject({ Status: 0, StatusText: '', OperationStatus: 0, TrackingCode: 'TN8', Obeservations: '', Message: '' });
  });

  it('keeps a status sent without its text textless under replacingSalePut (no documented text filled in)', async () => {
    sim.faults.set({ replacingSalePut: true });
    await s.call('PUT', '/Api/Sale/7', { body: { Status: 3 } });
    expect(sim.state.salesById.get(7)!.sale).toMatchObject({ Status: 3, StatusText: '' });
  });

  it('answers successful writes with an empty body, then OK, then an HTML page, and applies them', async () => {
    sim.faults.set({ nonJsonWriteBodies: true });
    const replies = [
      await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'SKU-000001', Stock: 4 } }),
      await s.call('POST', '/Api/Inventory', { body: { InternalId: 0, Code: 'NEW-1', Stock: 2 } }),
      await s.call('PUT', '/Api/Sale/7', { body: { TrackingCode: 'TN9' } }),
    ];
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(replies.map((r) => r.body)).toEqual(['', 'OK', expect.stringContaining('<html>')]);
    expect(replies.map((r) => String(r.headers['content-type']).split(';')[0])).toEqual(['text/plain', 'text/plain', 'text/html']);
    expect(sim.state.items.get('SKU-000001')!.item.Stock).toBe(4);
    expect(sim.state.items.has('NEW-1')).toBe(true);
    expect(sim.state.salesById.get(7)!.sale.TrackingCode).toBe('TN9');
  });

  it('keeps JSON for reads, refusals and {Success:false} answers under nonJsonWriteBodies', async () => {
    sim.faults.set({ nonJsonWriteBodies: true, successFalseRate: 1 });
    const refused = await s.call<{ Success: boolean }>('PUT', '/Api/Sale/7', { body: { TrackingCode: 'TN9' } });
    expect(refused.body.Success).toBe(false);
    sim.faults.set({ successFalseRate: 0 });
    const bad = await s.call<{ Success: boolean }>('PUT', '/Api/Sale/7', { body: { Observations: 'typo' } });
    expect(bad).toMatchObject({ status: 400, body: { Success: false } });
    const read = await s.call<{ Id: number }>('GET', '/Api/Sale/7');
    expect(read.body.Id).toBe(7);
  });
});
