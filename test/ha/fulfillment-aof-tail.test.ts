/**
 * The fulfillment flow across a Redis restarted from an append-only file that lost its tail (as
 * aof-tail.test.ts does for inventory): the flow's memory of its source's polls (`PollHistory`, which
 * narrows the next overlap) was learned from the Redis that had the lost writes, so it must be dropped
 * and the source re-read with its whole overlap. The row lost here is a late commit (a shipment stamped
 * before the cursor, read by the overlap of the poll whose job Redis lost): kept, the history would start
 * the next poll past the cursor and that shipment would never reach the store.
 */
import { randomUUID } from 'node:crypto';
import { statSync, truncateSync } from 'node:fs';

import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import { type RedisServer, startRedisServer } from '../../src/queue/redis-server.js';
import type { FlowDeps } from '../../src/sync/flow.js';
import { type FulfillmentFlow, startFulfillmentFlow } from '../../src/sync/fulfillment/index.js';
import { waitFor } from '../../src/wait-for.js';
import { pgScratch } from '../erp/databases.js';
import { NEVER } from '../helpers/erp-scenario.js';
import { incrFile } from '../support/redis-ha.js';
import { type Harness, PG_URL, startHarness, updatesBySale } from '../sync/sales/harness.js';

const OVERLAP_MS = 10_000;
/** The ERP's clock and the flows' clock start together; the test moves both. */
const BASE = Date.UTC(2026, 0, 15, 10);
let clock = BASE;

let server: RedisServer;
let scratch: Awaited<ReturnType<typeof pgScratch>>;
let h: Harness;
let deps: FlowDeps;
const connections: Redis[] = [];

beforeAll(async () => {
  server = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] });
  scratch = await pgScratch();
  await scratch.db.query(`CREATE TABLE ${scratch.schema}.shipments (sale_id int NOT NULL, status int NOT NULL, modified timestamptz NOT NULL)`);
  h = await startHarness({
    now: () => clock,
    config: {
      redis: { url: server.url, prefix: `test-${randomUUID()}` },
      fulfillment: {
        sources: [
          {
            name: 'shipments',
            kind: 'sql',
            url: PG_URL,
            schedule: NEVER,
            overlapMs: OVERLAP_MS,
            changes: `SELECT sale_id AS "SaleId", status AS "Status", modified AS cursor FROM ${scratch.schema}.shipments
              WHERE CAST(:cursor AS timestamptz) IS NULL OR modified >= :cursor ORDER BY modified, sale_id LIMIT :limit`,
          },
        ],
      },
    },
  });
  deps = {
    ...h.deps,
    connect: () => {
      const connection = createRedis(server.url);
      connection.on('error', () => undefined);
      connections.push(connection);
      return connection;
    },
  };
  for (const id of [11, 12]) h.sim.addSale({ Id: id, SiteId: 1, Status: 1, StatusText: 'Confirmada', TrackingCode: '', CreationDate: h.storeDate(60) });
});

afterAll(async () => {
  for (const connection of connections) connection.disconnect();
  await h?.close();
  await scratch?.drop();
  await server?.destroy();
});

async function ship(saleId: number, status: number, at: number): Promise<void> {
  await scratch.db.query(`INSERT INTO ${scratch.schema}.shipments VALUES (:saleId, :status, :at)`, { saleId, status, at: new Date(at) });
}

const statusOf = (saleId: number): unknown => updatesBySale(h.sim).get(saleId)?.at(-1)?.Status;

describe('fulfillment across a Redis restarted from an append-only file that lost its tail', () => {
  it('drops its poll history and re-reads the whole overlap: a late shipment whose job Redis lost still reaches the store', async () => {
    const producer: FulfillmentFlow = await startFulfillmentFlow(deps, { role: 'producer' });
    let worker: FulfillmentFlow | undefined = await startFulfillmentFlow(deps, { role: 'worker' });
    try {
      // Sale 11 ships, polled 100 ms after its stamp (the ERP's clock is 100 ms behind at most).
      await ship(11, 2, BASE);
      clock = BASE + 100;
      expect(await producer.poll('shipments')).toMatchObject({ queued: 1 });
      await waitFor(() => statusOf(11) === 2, { message: 'sale 11 in process on the store' });
      await worker.close(1000);
      worker = undefined;
      const file = incrFile(server.dir);
      const kept = statSync(file).size;

      // 20 s later, sale 12's shipment commits late, stamped 5 s before the cursor: the overlap reads it, its job is queued.
      await ship(12, 3, BASE - 5000);
      clock = BASE + 20_000;
      const late = await producer.poll('shipments');
      expect(late.queued, 'the late shipment of sale 12 queued').toBeGreaterThanOrEqual(1);

      // The crash: Redis is killed and its file loses that poll's writes (the job of sale 12).
      await server.kill();
      expect(statSync(file).size).toBeGreaterThan(kept);
      truncateSync(file, kept);
      await server.start();

      // The same process polls again: Redis is not the one its history was learned from.
      clock = BASE + 20_100;
      const report = await producer.poll('shipments');
      expect(report.read, 'rows read after the restart: the whole overlap (sale 11 and the late sale 12), not from past the cursor').toBe(2);
      expect(report.queued).toBeGreaterThanOrEqual(1);
      worker = await startFulfillmentFlow(deps, { role: 'worker' });
      await waitFor(() => statusOf(12) === 3, { message: 'sale 12 completed on the store' });
      expect(statusOf(11)).toBe(2);
    } finally {
      await worker?.close(1000);
      await producer.close(1000);
    }
  });
});
