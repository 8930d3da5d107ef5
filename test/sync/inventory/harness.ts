/**
 * Shared set-up of the inventory tests: a simulator over real HTTP, a configuration under a fresh Redis
 * prefix, flow dependencies that track their connections, and a way to stage pending values as the
 * producer would.
 */
import { randomUUID } from 'node:crypto';

import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';

import { mergeDeep } from '../../../src/config/load.js';
import { type Config, configSchema } from '../../../src/config/schema.js';
import { describeUnknownKey, findUnknownKeys } from '../../../src/config/unknown-keys.js';
import { type Logger, silentLogger } from '../../../src/log.js';
import { Metrics } from '../../../src/metrics.js';
import { Readiness } from '../../../src/ops/health.js';
import { buildHttpServer } from '../../../src/ops/http-server.js';
import { createRedis, QUEUE_NAMES } from '../../../src/queue/connection.js';
import { type ItemInput, type Simulator, type SimulatorOptions, startSimulator } from '../../../src/simulator/index.js';
import { StoreClient } from '../../../src/store/client.js';
import type { FlowDeps } from '../../../src/sync/flow.js';
import { enqueueSkus } from '../../../src/sync/inventory/enqueue.js';
import { confirmVanished, heldPage, keepVanished, markSalesProcessed } from '../../../src/sync/inventory/index.js';
import type { InventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import type { PendingEntry } from '../../../src/sync/inventory/types.js';
import { waitFor } from '../../../src/wait-for.js';
import { PG_URL } from '../../erp/databases.js';
import { NEVER } from '../../helpers/erp-scenario.js';
import { deleteKeys } from '../../support/redis.js';

/** The Redis every test uses (each under its own prefix). */
export const REDIS_URL = 'redis://127.0.0.1:6379/0';

/** A test's world: its own prefix, simulator, store client and connections. */
export interface Harness {
  prefix: string;
  sim: Simulator;
  /** Flow dependencies with `overrides` applied to the configuration. */
  deps(overrides?: Record<string, unknown>): FlowDeps;
  /** Closes everything the harness opened and deletes the prefix's keys. */
  close(): Promise<void>;
}

/**
 * Starts a simulator holding `items` (or that many seeded items), with `simOptions` (its readings of
 * sites and price lists), and prepares dependencies under a fresh prefix.
 */
export async function createHarness(items: number | readonly ItemInput[], simOptions: Pick<SimulatorOptions, 'itemsPerSite' | 'priceLists'> = {}): Promise<Harness> {
  const prefix = `test-${randomUUID()}`;
  const sim = await startSimulator({ port: 0, items, sales: 0, users: 0, clients: 0, ...simOptions });
  const connections: Redis[] = [];
  const stores: StoreClient[] = [];
  const admin = createRedis(REDIS_URL);
  return {
    prefix,
    sim,
    deps(overrides = {}) {
      const config = testConfig(prefix, sim.url, overrides);
      const store = new StoreClient({ config: config.store, logger: silentLogger() });
      stores.push(store);
      return {
        config,
        store,
        logger: silentLogger(),
        metrics: new Metrics({ defaultMetrics: false }),
        connect: () => {
          const connection = createRedis(REDIS_URL);
          connections.push(connection);
          return connection;
        },
      };
    },
    async close() {
      await Promise.all(stores.map((store) => store.close()));
      for (const connection of connections) connection.disconnect();
      await deleteKeys(admin, prefix);
      admin.disconnect();
      await sim.close();
    },
  };
}

/** The configuration of a test: small backoff, the simulator's credentials, `overrides` merged deeply. */
export function testConfig(prefix: string, storeUrl: string, overrides: Record<string, unknown> = {}): Config {
  const base = {
    store: { baseUrl: storeUrl, username: 'demo', password: 'demo-password', retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 5 } },
    redis: { url: REDIS_URL, prefix },
    inventory: { attempts: 3, backoffMs: 10, concurrency: 4 },
  };
  const tree = mergeDeep(base, overrides);
  // The same rule as loadConfig: a mistyped key in a test's overrides would otherwise be dropped silently.
  const unknown = findUnknownKeys(configSchema, tree);
  if (unknown.length > 0) throw new Error(unknown.map((key) => describeUnknownKey(key)).join('\n'));
  return configSchema.parse(tree);
}

/** Merges values for `sku` at `version` and queues its job, as a poll would. */
export async function stage(
  rt: InventoryRuntime,
  sku: string,
  fields: Record<string, unknown>,
  version: number,
  options: { force?: boolean; entryForce?: boolean } = {},
): Promise<void> {
  const entries: Record<string, PendingEntry> = {};
  for (const [field, value] of Object.entries(fields)) {
    entries[field] = { value, version, at: Date.now(), source: 'test', ...(options.entryForce ? { force: true } : {}) };
  }
  await rt.state.merge([{ sku, entries }]);
  await enqueueSkus(rt.queue, [sku], options.force ? { force: true } : {});
}

/** The accepted writes of one SKU. */
export function writesOf(sim: Simulator, sku: string) {
  return sim.writes.filter((write) => write.code === sku);
}

/** The HTTP server's routes over `d` (whose config names the admin credentials), the inventory ones but explain wired as the daemon wires them. */
export function inventoryAdmin(d: FlowDeps, logger: Logger): Promise<FastifyInstance> {
  return buildHttpServer({
    config: d.config,
    logger,
    metrics: d.metrics,
    readiness: new Readiness({ redis: { ping: async () => 'PONG' }, store: d.store }),
    queues: [],
    control: { queueName: QUEUE_NAMES.control, enqueue: async () => 'unused' },
    inventory: {
      explain: () => Promise.reject(new Error('unused')),
      markProcessed: (request) => markSalesProcessed(d, request),
      heldPage: (name, options) => heldPage(d, name, options),
      confirmVanished: (name) => confirmVanished(d, name),
      keepVanished: (name) => keepVanished(d, name),
      defaultSiteId: 1,
    },
  });
}

/** Resolves once `queue` (an inventory flow's) has no job waiting, prioritized, delayed or running; 30 s at most. */
export async function drained(queue: Queue): Promise<void> {
  await waitFor(async () => Object.values(await queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), {
    message: 'the inventory queue drained',
    timeoutMs: 30_000,
  });
}

/**
 * The flow tests' ERP: an sql source over `<schema>.stock (code, qty, modified timestamp)` on PostgreSQL,
 * polled by `modified` on no schedule of its own (the test polls); `extra` adds or overrides keys.
 */
export function pgStockSource(schema: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'erp',
    kind: 'sql',
    url: PG_URL,
    timeZone: 'UTC',
    schedule: NEVER,
    changes: `SELECT code AS "Code", qty AS "Stock", modified AS cursor FROM ${schema}.stock
      WHERE CAST(:cursor AS timestamp) IS NULL OR modified > :cursor ORDER BY modified, code LIMIT :limit`,
    ...extra,
  };
}
