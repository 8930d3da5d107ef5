import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';

import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import type { SqlClient } from '../../../src/erp/sql-client.js';
import { QUEUE_NAMES } from '../../../src/queue/connection.js';
import { pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { saleJobId } from '../../../src/sync/sales/pull.js';
import { waitFor } from '../../../src/wait-for.js';
import { CountingSink, type Harness, PG_URL, pgInterfaceTables, startHarness, updatesBySale } from './harness.js';


/**
 * A small ERP endpoint: answers `down.status` (503 unless told otherwise) with a reason while `down`,
 * otherwise accepts each Idempotency-Key once.
 */
async function startErp(status = 503): Promise<{ url: string; accepted: Map<string, number>; requests: () => number; down: { value: boolean; status: number }; close(): Promise<void> }> {
  const accepted = new Map<string, number>();
  const down = { value: true, status };
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      if (down.value) return void res.writeHead(down.status, { 'content-type': 'application/json' }).end('{"error":"field CustomerTaxId is required"}');
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

/** A TCP relay to PostgreSQL that can be stopped (every connection cut, new ones refused) and started again on its port. */
async function startRelay(): Promise<{ port: number; stop(): Promise<void>; start(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = new (client.constructor as typeof Socket)();
    upstream.connect(5432, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const stop = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return { port, stop, start: () => listen(port), close: () => (server.listening ? stop() : Promise.resolve()) };
}

describe('sales flow with the ERP unavailable or refusing', () => {
  let h: Harness | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await h?.close();
    h = undefined;
  });

  async function failedJob(saleId: number) {
    const queue = new Queue(QUEUE_NAMES.sales, { connection: h!.redis, prefix: h!.prefix });
    try {
      const id = saleJobId({ siteId: 1, saleId });
      // The state first: once it says failed, the job read after it is final.
      const state = await queue.getJobState(id);
      const job = await queue.getJob(id);
      return { state, attemptsMade: job?.attemptsMade, failedReason: job?.failedReason };
    } finally {
      await queue.close();
    }
  }

  it('fails a sale the HTTP ERP refuses with 400 after one attempt, with the ERP\'s reason, and the next pull leaves it failed', async () => {
    const erp = await startErp(400);
    cleanups.push(() => erp.close());
    h = await startHarness({ config: { sales: { attempts: 5, backoffMs: 10, sink: { kind: 'http', url: erp.url } } } });
    h.sim.addSale({ Id: 11, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    const flow = await startSalesFlow(h.deps, { role: 'worker' });
    cleanups.push(() => flow.close());
    const failed = flow.events.next('sales:job:failed');
    await pullSales(h.deps);
    expect(await failed).toMatchObject({ saleId: 11, willRetry: false });
    const job = await waitFor(async () => {
      const found = await failedJob(11);
      return found.state === 'failed' && found;
    });
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(/^ERR_ERP_HTTP: http-sink: POST http:\/\/127\.0\.0\.1:\d+\/orders answered HTTP 400: .*CustomerTaxId is required/);
    expect(erp.requests()).toBe(1);

    // The next pull does not send the refused sale again: it waits for an admin.
    expect(await pullSales(h.deps)).toMatchObject({ refused: 1, retried: 0, queued: 0 });
    expect((await failedJob(11)).state).toBe('failed');
    expect(erp.requests()).toBe(1);
    expect(updatesBySale(h.sim).size).toBe(0);
  });

  it('loses nothing while the HTTP endpoint answers 503 and exports each sale once when it is back', async () => {
    const erp = await startErp();
    cleanups.push(() => erp.close());
    h = await startHarness({ config: { sales: { attempts: 20, backoffMs: 10, sink: { kind: 'http', url: erp.url } } } });
    for (const id of [11, 12, 13]) h.sim.addSale({ Id: id, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    await pullSales(h.deps);
    const flow = await startSalesFlow(h.deps, { role: 'worker' });
    cleanups.push(() => flow.close());
    const retries: Array<{ saleId: number; willRetry: boolean }> = [];
    flow.events.on('sales:job:failed', ({ saleId, willRetry }) => {
      retries.push({ saleId, willRetry });
      if (retries.length === 6) erp.down.value = false;
    });
    await waitFor(() => updatesBySale(h!.sim).size === 3, { message: 'three acknowledgements' });
    expect(retries.length).toBeGreaterThanOrEqual(6);
    expect(retries.every((r) => r.willRetry)).toBe(true);
    // Every failed attempt was a real request the ERP refused, and the retries that followed it are the only other
    // requests: one accepted export per sale, no duplicate.
    expect(erp.requests()).toBe(retries.length + 3);
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

    async function setUpPg(sinkUrl?: string): Promise<CountingSink> {
      const tables = await pgInterfaceTables(sinkUrl);
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
      const failures: Array<{ saleId: number; message: string; willRetry: boolean }> = [];
      flow.events.on('sales:job:failed', ({ saleId, error, willRetry }) => {
        failures.push({ saleId, message: error.message, willRetry });
        if (failures.length === 4) void admin.query(`ALTER TABLE "${schema}".storesync_sales_away RENAME TO storesync_sales`);
      });
      await pullSales(h.deps);
      await waitFor(() => updatesBySale(h!.sim).size === 2, { message: 'two acknowledgements' });
      expect(await rowsPerSale()).toEqual([
        [21, 1],
        [22, 1],
      ]);
      expect([...updatesBySale(h.sim).values()].map((u) => u.length)).toEqual([1, 1]);
      // The exports that failed on the missing table were retried: each sale was tried once per failure plus the
      // attempt that wrote its row.
      expect(failures.length).toBeGreaterThanOrEqual(4);
      expect(failures.every((f) => f.willRetry && /storesync_sales/.test(f.message))).toBe(true);
      for (const id of [21, 22]) expect(sink.exports.get(id)).toBe(failures.filter((f) => f.saleId === id).length + 1);
    });

    it('fails a sale that breaks a constraint of the ERP\'s table after one attempt, naming the constraint', async () => {
      const sink = await setUpPg();
      // The ERP team's own rule on the interface table, which this sale breaks.
      await admin.query(`ALTER TABLE "${schema}".storesync_sales ADD CONSTRAINT erp_refuses_sale_41 CHECK (sale_id <> 41)`);
      h = await startHarness({ config: { sales: { attempts: 5, backoffMs: 10 } } });
      h.sim.addSale({ Id: 41, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
      const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
      cleanups.push(() => flow.close());
      const failures: boolean[] = [];
      flow.events.on('sales:job:failed', ({ willRetry }) => failures.push(willRetry));
      await pullSales(h.deps);
      const job = await waitFor(async () => {
        const found = await failedJob(41);
        return found.state === 'failed' && found;
      });
      expect(failures).toEqual([false]);
      expect(job.attemptsMade).toBe(1);
      expect(job.failedReason).toMatch(/sale 1-41 not written: .*erp_refuses_sale_41/);
      expect(await rowsPerSale()).toEqual([]);
    });

    it('retries a sale while the connection to PostgreSQL is stopped and writes it once when it is back', async () => {
      const relay = await startRelay();
      cleanups.push(() => relay.close());
      const sink = await setUpPg(`postgres://postgres@127.0.0.1:${relay.port}/test`);
      h = await startHarness({ config: { sales: { attempts: 20, backoffMs: 10 } } });
      h.sim.addSale({ Id: 42, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
      // The worker starts while the database answers (its check passes), then the connection stops.
      const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
      cleanups.push(() => flow.close());
      await relay.stop();
      const retries: boolean[] = [];
      flow.events.on('sales:job:failed', ({ willRetry }) => {
        retries.push(willRetry);
        if (retries.length === 2) void relay.start();
      });
      await pullSales(h.deps);
      await flow.events.next('sales:acked');
      expect(retries.length).toBeGreaterThanOrEqual(2);
      expect(retries.every(Boolean)).toBe(true);
      expect(await rowsPerSale()).toEqual([[42, 1]]);
      expect(updatesBySale(h.sim).get(42)).toHaveLength(1);
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
      h = await startHarness({ config: { sales: { attempts: 5, backoffMs: 10, sink: { kind: 'sql', url: 'postgres://postgres@127.0.0.1:1/test' } } } });
      h.sim.addSale({ Id: 41, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
      await pullSales(h.deps);
      const flow = await startSalesFlow(h.deps, { role: 'worker' });
      cleanups.push(() => flow.close());
      const first = await flow.events.next('sales:job:failed');
      expect(first).toMatchObject({ saleId: 41, willRetry: true });
      const second = await flow.events.next('sales:job:failed');
      expect(second).toMatchObject({ saleId: 41, willRetry: true });
      expect(updatesBySale(h.sim).size).toBe(0);
    });

    it('refuses to start a worker when the interface tables are missing', async () => {
      h = await startHarness({ config: { sales: { sink: { kind: 'sql', url: PG_URL, schema: 'no_such_schema_here' } } } });
      await expect(startSalesFlow(h.deps, { role: 'worker' })).rejects.toThrow(/table storesync_sales is missing.*run "storesync migrate"/);
    });
  });
});
