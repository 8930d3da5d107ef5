/**
 * A single Redis that restarts from an append-only file missing its last writes (`appendfsync everysec`
 * and a crash of the host lose up to a second; the test cuts the file's tail after a SIGKILL, which is
 * the same thing, deterministically). The producer's memory of its source (the rows its overlap window
 * delivered) was learned from the Redis that had those writes: it must be dropped, the source re-read
 * from the older cursor Redis now holds, and the store must end equal to the ERP with no stale write.
 */
import { randomUUID } from 'node:crypto';
import { statSync, truncateSync } from 'node:fs';

import type { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import { type RedisServer, startRedisServer } from '../../src/queue/redis-server.js';
import type { FlowDeps } from '../../src/sync/flow.js';
import { type InventoryFlow, startInventoryFlow } from '../../src/sync/inventory/index.js';
import { waitFor } from '../../src/wait-for.js';
import { incrFile } from '../support/redis-ha.js';
import { createHarness, type Harness } from '../sync/inventory/harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `aof_${randomUUID().replace(/-/g, '')}`;
const db = new pg.Client({ connectionString: PG_URL });
const NEVER = '0 0 0 1 1 *';
const SKUS = Array.from({ length: 30 }, (_, i) => `AOF-${String(i + 1).padStart(3, '0')}`);

let h: Harness;
let server: RedisServer;
const connections: Redis[] = [];

beforeAll(async () => {
  h = await createHarness(SKUS.map((Code) => ({ Code, Stock: 0, Price: 1 })));
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`CREATE TABLE ${schema}.items (code text PRIMARY KEY, stock int, price numeric(12,2), modified timestamptz NOT NULL)`);
  // Production's persistence: an append-only file fsynced every second.
  server = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] });
});

afterAll(async () => {
  for (const connection of connections) connection.disconnect();
  await server.destroy();
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
  await h.close();
});

function deps(): FlowDeps {
  const base = h.deps({
    redis: { url: server.url },
    inventory: {
      sources: [
        {
          name: 'pg',
          kind: 'sql',
          url: PG_URL,
          schedule: NEVER,
          limit: 100,
          changes:
            `SELECT code AS "Code", stock AS "Stock", price AS "Price", modified AS cursor FROM ${schema}.items ` +
            'WHERE CAST(:cursor AS timestamptz) IS NULL OR modified >= :cursor ORDER BY modified, code LIMIT :limit',
        },
      ],
    },
  });
  return {
    ...base,
    connect: () => {
      const connection = createRedis(server.url);
      connection.on('error', () => undefined);
      connections.push(connection);
      return connection;
    },
  };
}

/** Writes version `v` of every SKU (Stock v, Price v) stamped `at` + i ms. */
async function writeVersion(v: number, at: number): Promise<void> {
  for (const [i, code] of SKUS.entries()) {
    await db.query(
      `INSERT INTO ${schema}.items VALUES ($1, $2, $3, $4) ON CONFLICT (code) DO UPDATE SET stock = EXCLUDED.stock, price = EXCLUDED.price, modified = EXCLUDED.modified`,
      [code, v, v, new Date(at + i).toISOString()],
    );
  }
}

const storeHas = (v: number): boolean => SKUS.every((code) => h.sim.state.items.get(code)?.item.Stock === v && h.sim.state.items.get(code)?.item.Price === v);

describe('a Redis restarted from an append-only file that lost its tail', () => {
  it('makes the producer drop what it remembered and re-read from the cursor Redis holds: the store ends equal to the ERP, no stale write', async () => {
    const producer: InventoryFlow = await startInventoryFlow(deps(), { role: 'producer' });
    let worker: InventoryFlow | undefined = await startInventoryFlow(deps(), { role: 'worker' });
    try {
      const t0 = Date.now() - 5000;
      await writeVersion(10, t0);
      expect(await producer.poll('pg')).toMatchObject({ queued: SKUS.length });
      await waitFor(() => storeHas(10), { message: 'version 10 on the store' });
      await worker.close(1000);
      worker = undefined;
      // What Redis will still have after the crash: everything up to here.
      const file = incrFile(server.dir);
      const kept = statSync(file).size;

      // Version 20 is polled, merged and queued (no worker runs), and the overlap window remembers its rows...
      await writeVersion(20, t0 + 1000);
      expect(await producer.poll('pg')).toMatchObject({ queued: SKUS.length });
      // ...which a re-read now recognises as delivered.
      expect(await producer.poll('pg')).toMatchObject({ queued: 0, known: SKUS.length });

      // The crash: Redis is killed and its file loses the writes of version 20 (cursor, merges, jobs).
      await server.kill();
      expect(statSync(file).size).toBeGreaterThan(kept);
      truncateSync(file, kept);
      await server.start();

      // The same process polls again: Redis is not the one it learned its window from, so the rows are new again.
      const report = await producer.poll('pg');
      expect(report).toMatchObject({ queued: SKUS.length, known: 0 });
      worker = await startInventoryFlow(deps(), { role: 'worker' });
      await waitFor(() => storeHas(20), { message: 'version 20 on the store' });

      // Each SKU was written twice, 10 then 20: nothing older after newer.
      for (const code of SKUS) expect(h.sim.writes.filter((write) => write.code === code).map((write) => write.fields.Stock)).toEqual([10, 20]);
    } finally {
      await worker?.close(1000);
      await producer.close(1000);
    }
  });
});
