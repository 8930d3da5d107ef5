/**
 * What the sales and fulfillment flow tests share: a simulator over HTTP, a configuration under a test
 * Redis prefix, the flow dependencies, a counting sink wrapper, and clean-up of all of it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Redis } from 'ioredis';

import { loadConfig, mergeDeep } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import type { ExportResult, SalesSink } from '../../../src/erp/sinks/index.js';
import { migrateInterfaceTables } from '../../../src/erp/sinks/migrations.js';
import { SqlSalesSink } from '../../../src/erp/sinks/sql-sink.js';
import { openSql, type SqlClient } from '../../../src/erp/sql-client.js';
import { silentLogger } from '../../../src/log.js';
import { Metrics } from '../../../src/metrics.js';
import { createRedis } from '../../../src/queue/connection.js';
import { formatStoreDate } from '../../../src/simulator/clock.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { StoreClient } from '../../../src/store/client.js';
import type { Sale } from '../../../src/store/schemas/index.js';
import type { FlowDeps } from '../../../src/sync/flow.js';
import { deleteKeys } from '../../support/redis.js';

export const TIME_ZONE = 'America/Argentina/Buenos_Aires';
const REDIS_URL = 'redis://127.0.0.1:6379/0';
/** The PostgreSQL database of the tests (each test uses a schema of its own). */
export const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** A running test environment. */
export interface Harness {
  sim: Simulator;
  config: Readonly<Config>;
  deps: FlowDeps;
  metrics: Metrics;
  /** A connection for assertions on Redis. */
  redis: Redis;
  prefix: string;
  /** A store date (`MM/DD/YYYY HH:MM:SS`, store zone) `minutesAgo` before the harness clock. */
  storeDate(minutesAgo: number): string;
  close(): Promise<void>;
}

/** Options of `startHarness`. */
export interface HarnessOptions {
  /** Config layered over the test defaults. */
  config?: Record<string, unknown>;
  /** The flows' clock (the simulator keeps the real one). */
  now?: () => number;
}

/** Starts a simulator with no seeded sales and the dependencies of a flow pointed at it. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const sim = await startSimulator({ port: 0, sales: 0, items: 20, users: 3, timeZone: TIME_ZONE });
  const prefix = `test-${randomUUID()}`;
  const sinkDir = mkdtempSync(join(tmpdir(), 'storesync-sales-'));
  const base = {
    store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, timeZone: TIME_ZONE, retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 50 } },
    redis: { url: REDIS_URL, prefix },
    log: { level: 'silent' },
    // Sales sync runs only with a sink configured; tests that pass their own sink to the flow still need one here for pulls.
    sales: { concurrency: 4, attempts: 5, backoffMs: 20, pull: { schedule: '0 0 0 1 1 *', lookbackHours: 48 }, sink: { kind: 'file', dir: sinkDir } },
    fulfillment: { attempts: 3, backoffMs: 20 },
  };
  const config = loadConfig({ env: {}, overrides: mergeDeep(base, options.config ?? {}) });
  const logger = silentLogger();
  const metrics = new Metrics({ defaultMetrics: false });
  const store = new StoreClient({ config: config.store, logger, metrics });
  const connections: Redis[] = [];
  const now = options.now ?? Date.now;
  const deps: FlowDeps = {
    config,
    connect: () => {
      const connection = createRedis(REDIS_URL);
      connections.push(connection);
      return connection;
    },
    store,
    logger,
    metrics,
    now,
  };
  const redis = createRedis(REDIS_URL);
  return {
    sim,
    config,
    deps,
    metrics,
    redis,
    prefix,
    storeDate: (minutesAgo) => formatStoreDate(now() - minutesAgo * 60_000, TIME_ZONE),
    async close() {
      await store.close();
      await sim.close();
      await deleteKeys(redis, prefix);
      redis.disconnect();
      rmSync(sinkDir, { recursive: true, force: true });
      // Flows quit what they open; anything a failed test left open goes here.
      for (const connection of connections) connection.disconnect();
    },
  };
}

/** Wraps a sink, counting exports per sale and optionally failing after a real export. */
export class CountingSink implements SalesSink {
  readonly kind;
  readonly exports = new Map<number, number>();
  /** Sales whose next export succeeds in the ERP and then "crashes" before storesync hears of it. */
  readonly crashAfterExport = new Set<number>();

  constructor(readonly inner: SalesSink) {
    this.kind = inner.kind;
  }

  check(): Promise<void> {
    return this.inner.check();
  }

  async export(sale: Sale, siteId: number): Promise<ExportResult> {
    this.exports.set(sale.Id, (this.exports.get(sale.Id) ?? 0) + 1);
    const result = await this.inner.export(sale, siteId);
    if (this.crashAfterExport.delete(sale.Id)) throw new Error(`simulated crash after exporting sale ${sale.Id}`);
    return result;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Store acknowledgements (sale updates) per sale id. */
export function updatesBySale(sim: Simulator): Map<number, Array<Record<string, unknown>>> {
  const out = new Map<number, Array<Record<string, unknown>>>();
  for (const entry of sim.saleUpdates) out.set(entry.saleId, [...(out.get(entry.saleId) ?? []), entry.fields]);
  return out;
}

/** A SQL sink into fresh interface tables in a PostgreSQL schema of its own, and a connection to check them. */
export interface PgInterfaceTables {
  sink: SqlSalesSink;
  admin: SqlClient;
  schema: string;
  /** Closes the sink, drops the schema, closes the connection. */
  close(): Promise<void>;
}

/** Creates a schema, migrates the interface tables into it and opens a sink on them (through `sinkUrl`, a relay in some tests). */
export async function pgInterfaceTables(sinkUrl = PG_URL): Promise<PgInterfaceTables> {
  const admin = openSql(PG_URL);
  const schema = `ss_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const names = { schema, sales: 'storesync_sales', items: 'storesync_sale_items' };
  await migrateInterfaceTables(admin, names);
  const sink = new SqlSalesSink(openSql(sinkUrl), { tables: names, timeZone: TIME_ZONE });
  return {
    sink,
    admin,
    schema,
    async close() {
      await sink.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.close();
    },
  };
}
