import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer, type Socket } from 'node:net';

import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import { HttpSalesSink } from '../../../src/erp/sinks/http-sink.js';
import { migrateInterfaceTables } from '../../../src/erp/sinks/migrations.js';
import { SqlSalesSink } from '../../../src/erp/sinks/sql-sink.js';
import { openSql, type SqlClient } from '../../../src/erp/sql-client.js';
import { QUEUE_NAMES } from '../../../src/queue/connection.js';
import { pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { saleJobId } from '../../../src/sync/sales/pull.js';
import { waitFor } from '../../queue/redis-helpers.js';
import { type Harness, startHarness, TIME_ZONE, updatesBySale } from './harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** An ERP endpoint answering `status` (with a reason) until told otherwise, then 201. */
async function startErp(status: number): Promise<{ url: string; requests: () => number; answer: { status: number }; close(): Promise<void> }> {
  const answer = { status };
  let requests = 0;
  const server: Server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      if (answer.status === 201) return void res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"SO-1"}');
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end('{"error":"field CustomerTaxId is required"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`,
    requests: () => requests,
    answer,
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

describe('sales jobs: permanent errors fail at once, temporary ones retry', () => {
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
      const job = await queue.getJob(saleJobId({ siteId: 1, saleId }));
      return { state: await job?.getState(), attemptsMade: job?.attemptsMade, failedReason: job?.failedReason };
    } finally {
      await queue.close();
    }
  }

  it('fails a sale the HTTP ERP refuses with 400 after one attempt, with the ERP\'s reason, and the next pull leaves it failed', async () => {
    const erp = await startErp(400);
    cleanups.push(() => erp.close());
    h = await startHarness({ config: { sales: { attempts: 5, backoffMs: 10 } } });
    const sink = new HttpSalesSink({ url: erp.url, headers: {}, timeoutMs: 5000 });
    cleanups.push(() => sink.close());
    h.sim.addSale({ Id: 11, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
    cleanups.push(() => flow.close());
    const failed = flow.events.next('sales:job:failed');
    await pullSales(h.deps);
    expect(await failed).toMatchObject({ saleId: 11, willRetry: false });
    const job = await waitFor(async () => {
      const found = await failedJob(11);
      return found.state === 'failed' && found;
    });
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(/^ERR_ERP: http-sink: POST http:\/\/127\.0\.0\.1:\d+\/orders answered HTTP 400: .*CustomerTaxId is required/);
    expect(erp.requests()).toBe(1);

    // The next pull does not send the refused sale again: it waits for an admin.
    expect(await pullSales(h.deps)).toMatchObject({ refused: 1, retried: 0, queued: 0 });
    expect((await failedJob(11)).state).toBe('failed');
    expect(erp.requests()).toBe(1);
    expect(updatesBySale(h.sim).size).toBe(0);
  });

  it('retries a sale while the HTTP ERP answers 503 and exports it when the ERP is back', async () => {
    const erp = await startErp(503);
    cleanups.push(() => erp.close());
    h = await startHarness({ config: { sales: { attempts: 20, backoffMs: 10 } } });
    const sink = new HttpSalesSink({ url: erp.url, headers: {}, timeoutMs: 5000 });
    cleanups.push(() => sink.close());
    h.sim.addSale({ Id: 12, SiteId: 1, Status: 1, CreationDate: h.storeDate(5) });
    const flow = await startSalesFlow(h.deps, { role: 'worker', sink });
    cleanups.push(() => flow.close());
    const retries: boolean[] = [];
    flow.events.on('sales:job:failed', ({ willRetry }) => {
      retries.push(willRetry);
      if (retries.length === 3) erp.answer.status = 201;
    });
    await pullSales(h.deps);
    await flow.events.next('sales:acked');
    expect(retries).toEqual([true, true, true]);
    expect(erp.requests()).toBe(4);
    expect(updatesBySale(h.sim).get(12)).toHaveLength(1);
  });

  describe('into PostgreSQL interface tables', () => {
    let admin: SqlClient;
    let schema: string;
    const names = () => ({ schema, sales: 'storesync_sales', items: 'storesync_sale_items' });

    async function setUpPg(): Promise<void> {
      admin = openSql(PG_URL);
      schema = `ss_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
      await admin.query(`CREATE SCHEMA "${schema}"`);
      cleanups.push(async () => {
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.close();
      });
      await migrateInterfaceTables(admin, names());
    }

    it('fails a sale that breaks a constraint of the ERP\'s table after one attempt, naming the constraint', async () => {
      await setUpPg();
      // The ERP team's own rule on the interface table, which this sale breaks.
      await admin.query(`ALTER TABLE "${schema}".storesync_sales ADD CONSTRAINT erp_refuses_sale_41 CHECK (sale_id <> 41)`);
      const sink = new SqlSalesSink(openSql(PG_URL), { tables: names(), timeZone: TIME_ZONE });
      cleanups.push(() => sink.close());
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
      expect(await admin.query(`SELECT sale_id FROM "${schema}".storesync_sales`)).toEqual([]);
    });

    it('retries a sale while the connection to PostgreSQL is stopped and writes it once when it is back', async () => {
      await setUpPg();
      const relay = await startRelay();
      cleanups.push(() => relay.close());
      const sink = new SqlSalesSink(openSql(`postgres://postgres@127.0.0.1:${relay.port}/test`), { tables: names(), timeZone: TIME_ZONE });
      cleanups.push(() => sink.close());
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
      expect(await admin.query(`SELECT sale_id FROM "${schema}".storesync_sales`)).toEqual([{ sale_id: '42' }]);
      expect(updatesBySale(h.sim).get(42)).toHaveLength(1);
    });
  });
});
