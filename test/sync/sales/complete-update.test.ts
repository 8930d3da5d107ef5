/**
 * Acknowledgement and shipment updates against a store whose sale PUT replaces instead of merging
 * (the simulator's `replacingSalePut`): each write carries the complete update structure, so neither
 * erases what the other wrote, nor the customer's note.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { FileSalesSink } from '../../../src/erp/sinks/file-sink.js';
import { stateKey } from '../../../src/queue/connection.js';
import { updateSale } from '../../../src/sync/fulfillment/index.js';
import { exportOneSale, pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { waitFor } from '../../../src/wait-for.js';
import { CountingSink, type Harness, startHarness, updatesBySale } from './harness.js';

describe('sale writes on a store that replaces on PUT', () => {
  let h: Harness;
  let dir: string;
  let sink: CountingSink;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storesync-complete-'));
    h = await startHarness();
    h.sim.faults.set({ replacingSalePut: true });
    sink = new CountingSink(new FileSalesSink({ dir }));
  });

  afterEach(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  const addSale = (id: number): void => {
    h.sim.addSale({
      Id: id,
      SiteId: 1,
      Status: 1,
      StatusText: 'Confirmada',
      OperationStatus: 4,
      TrackingCode: '',
      Obeservations: 'Ring twice, please',
      Message: 'Gift wrap',
      CreationDate: h.storeDate(30),
    });
  };
  const sale = (id: number) => h.sim.state.salesById.get(id)!.sale;

  it('keeps every field through an acknowledgement followed by a shipment update', async () => {
    addSale(21);
    expect(await exportOneSale(h.deps, 21, { sink })).toMatchObject({ exported: true, acked: true });
    expect(sale(21)).toMatchObject({
      Status: 2,
      StatusText: 'In process',
      OperationStatus: 4,
      Obeservations: 'Ring twice, please\nERP order 1-21',
      Message: 'Gift wrap',
    });

    expect(await updateSale(h.deps, 21, { Status: 3, TrackingCode: 'TN-21' })).toMatchObject({ outcome: 'updated' });
    expect(sale(21)).toMatchObject({
      Status: 3,
      StatusText: 'Completed',
      OperationStatus: 4,
      TrackingCode: 'TN-21',
      Obeservations: 'Ring twice, please\nERP order 1-21',
      Message: 'Gift wrap',
    });
    // Each PUT carried the whole structure, which is why the replacing store emptied nothing.
    for (const fields of updatesBySale(h.sim).get(21) ?? []) {
      expect(Object.keys(fields).sort()).toEqual(['Message', 'Obeservations', 'OperationStatus', 'Status', 'StatusText', 'TrackingCode']);
    }
  });

  it('keeps the tracking code a shipment wrote before a retried acknowledgement, and appends the note once', async () => {
    addSale(22);
    // The first run exports, then the store fails: the acknowledgement waits for a retry.
    const failing = new CountingSink(new FileSalesSink({ dir }));
    const exportOnce = failing.export.bind(failing);
    failing.export = async (...args) => {
      const result = await exportOnce(...args);
      h.sim.faults.set({ failRate: 1 });
      return result;
    };
    await expect(exportOneSale(h.deps, 22, { sink: failing })).rejects.toThrow(/sale 1-22/);
    h.sim.faults.set({ failRate: 0 });
    const key = stateKey(h.prefix, 'sales', 1, 22);
    expect(await h.redis.hget(key, 'state')).toBe('exported');

    expect(await updateSale(h.deps, 22, { Status: 3, TrackingCode: 'TN-22' })).toMatchObject({ outcome: 'updated' });
    expect(await exportOneSale(h.deps, 22, { sink })).toMatchObject({ exported: false, acked: true });
    const expected = {
      Status: 3,
      StatusText: 'Completed',
      OperationStatus: 4,
      TrackingCode: 'TN-22',
      Obeservations: 'Ring twice, please\nERP order 1-22',
      Message: 'Gift wrap',
    };
    expect(sale(22)).toMatchObject(expected);

    // A worker killed after the store took the acknowledgement leaves "exported" behind: the next run
    // finds the note and the status already there and sends nothing.
    await h.redis.hset(key, 'state', 'exported');
    const updates = updatesBySale(h.sim).get(22)?.length;
    expect(await exportOneSale(h.deps, 22, { sink })).toMatchObject({ acked: true });
    expect(updatesBySale(h.sim).get(22)?.length).toBe(updates);
    expect(sale(22)).toMatchObject(expected);
    expect(sink.exports.get(22)).toBeUndefined();
  });

  it('acknowledges through the queue once per sale when the store answers its writes with empty, OK or HTML bodies', async () => {
    h.sim.faults.set({ nonJsonWriteBodies: true });
    for (const id of [31, 32, 33, 34]) addSale(id);
    expect(await pullSales(h.deps)).toMatchObject({ queued: 4 });
    const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
    const failures: string[] = [];
    const acked = new Set<number>();
    flow.events.on('sales:job:failed', ({ error }) => failures.push(error.message));
    flow.events.on('sales:acked', ({ saleId }) => acked.add(saleId));
    try {
      await waitFor(() => acked.size === 4, { message: 'four sales acknowledged' });
    } finally {
      await flow.close();
    }
    expect(failures).toEqual([]);
    expect(h.sim.counters().requests['PUT /Api/Sale/{id}']).toBe(4);
    for (const id of [31, 32, 33, 34]) {
      expect(sale(id)).toMatchObject({ Status: 2, StatusText: 'In process', OperationStatus: 4, Message: 'Gift wrap', Obeservations: `Ring twice, please\nERP order 1-${id}` });
    }
  });
});
