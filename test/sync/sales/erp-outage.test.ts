import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import type { SqlClient } from '../../../src/erp/sql-client.js';
import { pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { waitFor } from '../../queue/redis-helpers.js';
import { CountingSink, type Harness, PG_URL, pgInterfaceTables, startHarness, updatesBySale } from './harness.js';


/** A small ERP endpoint: answers 503 while `down`, otherwise accepts each Idempotency-Key once. */
async function startErp(): Promise<{ url: string; accepted: Map<string, number>; requests: () => number; down: { value: boolean }; close(): Promise<void> }> {
  const accepted = new Map<string, number>();
  const down = { value: true };
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      if (down.value) return void res.writeHead(503).end('ERP restarting');
      const key = String(req.headers['idempotency-key']);
      if (accepted.has(key)) return void res.writeHead(409).end();
      accepted.set(key, accepted.size + 1);
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `SO-${accepted.get(key)}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`,
    accepted,
    requests: () => requests,
    down,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('sales flow with the ERP unavailable', () => {
  let h: Harness | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await h?.close();
    h = undefined;
  });

  it('loses nothing while the HTTP endpoint answers 503 and exports each sale once when it is back', async () => {
    const erp = await startErp();
    cleanups.push(() => erp.close());
    h = await startHarness({ config: { sales: { attempts: 20, backoffMs: 10, sink: { kind: 'http', url: erp.url } } } });
    for (const id of [11, 12, 13]) h.sim.addSale({ Id: id, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    await pullSales(h.deps);
    const flow = await startSalesFlow(h.deps, { role: 'worker' });
    cleanups.push(() => flow.close());
    const retries: boolean[] = [];
    flow.events.on('sales:job:failed', ({ willRetry }) => {
      retries.push(willRetry);
      if (retries.length === 6) erp.down.value = false;
    });
    await waitFor(() => updatesBySale(h!.sim).size === 3, { message: 'three acknowledgements' });
    expect(retries.length).toBeGreaterThanOrEqual(6);
    expect(retries.every(Boolean)).toBe(true);
    expect([...erp.accepted.keys()].sort()).toEqual(['1-11', '1-12', '1-13']);
    const observations = [...updatesBySale(h.sim).values()].map((updates) => {
      expect(updates).toHaveLength(1);
      return updates[0]!.Obeservations;
    });
    expect(observations.sort()).toEqual(['ERP order SO-1', 'ERP order SO-2', 'ERP order SO-3']);
  });

  it('gives a sale whose attempts ran out during a long outage fresh attempts on the next pull', async () => {
    const erp = await startErp();
    cleanups.push(() => erp.close());
    h = await startHarness({ config: { sales: { attempts: 2, backoffMs: 10, sink: { kind: 'http', url: erp.url } } } });
    h.sim.addSale({ Id: 21, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    await pullSales(h.deps);
    const flow = await startSalesFlow(h.deps, { role: 'worker' });
    cleanups.push(() => flow.close());
    await flow.events.next('sales:job:failed', ({ willRetry }) => !willRetry);
    expect(updatesBySale(h.sim).size).toBe(0);

    erp.down.value = false;
    const report = await pullSales(h.deps);
    expect(report).toMatchObject({ retried: 1, queued: 0 });
    await waitFor(() => updatesBySale(h!.sim).size === 1, { message: 'the acknowledgement after the retry' });
    expect([...erp.accepted.keys()]).toEqual(['1-21']);
  });

  describe('into PostgreSQL interface tables', () => {
    let admin: SqlClient;
    let schema: string;

    async function setUpPg(): Promise<CountingSink> {
      const tables = await pgInterfaceTables();
      ({ admin, schema } = tables);
      const sink = new CountingSink(tables.sink);
      cleanups.push(() => tables.close());
      return sink;
    }

    const rowsPerSale = async (): Promise<Array<[number, number]>> =>
      (await admin.query(`SELECT sale_id, COUNT(*) AS n FROM "${schema}".storesync_sales GROUP BY sale_id ORDER BY sale_id`)).map((r) => [
        Number(r.sale_id),
        Number(r.n),
      ]);

    it('retries while the sales table is renamed away and writes each sale once when it is back', async () => {
      const sink = await setUpPg();
      h = await startHarness({ config: { sales: { attempts: 20, backoffMs: 10 } } });
      for (const id of [21, 22]) h.sim.addSale({ Id: id, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
      const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
      cleanups.push(() => flow.close());
      // The ERP team renames the table away after the worker started (its start-up check passed).
      await admin.query(`ALTER TABLE "${schema}".storesync_sales RENAME TO storesync_sales_away`);
      let failures = 0;
      flow.events.on('sales:job:failed', () => {
        failures += 1;
        if (failures === 4) void admin.query(`ALTER TABLE "${schema}".storesync_sales_away RENAME TO storesync_sales`);
      });
      await pullSales(h.deps);
      await waitFor(() => updatesBySale(h!.sim).size === 2, { message: 'two acknowledgements' });
      expect(await rowsPerSale()).toEqual([
        [21, 1],
        [22, 1],
      ]);
      expect([...updatesBySale(h.sim).values()].map((u) => u.length)).toEqual([1, 1]);
    });

    it('keeps one row and one acknowledgement when the process died after the row was committed', async () => {
      const sink = await setUpPg();
      h = await startHarness();
      h.sim.addSale({ Id: 31, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
      sink.crashAfterExport.add(31);
      await pullSales(h.deps);
      const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
      cleanups.push(() => flow.close());
      await flow.events.next('sales:acked');
      expect(sink.exports.get(31)).toBe(2);
      expect(await rowsPerSale()).toEqual([[31, 1]]);
      expect(updatesBySale(h.sim).get(31)).toHaveLength(1);
    });

    it('starts a worker while the ERP database cannot be reached, leaving the exports to retry', async () => {
      h = await startHarness({ config: { sales: { sink: { kind: 'sql', url: 'postgres://postgres@127.0.0.1:1/test' } } } });
      const flow = await startSalesFlow(h.deps, { role: 'worker' });
      await flow.close();
    });

    it('refuses to start a worker when the interface tables are missing', async () => {
      h = await startHarness({ config: { sales: { sink: { kind: 'sql', url: PG_URL, schema: 'no_such_schema_here' } } } });
      await expect(startSalesFlow(h.deps, { role: 'worker' })).rejects.toThrow(/table storesync_sales is missing.*run "storesync migrate"/);
    });
  });
});
