/**
 * Sentinel failover under a running sync: a primary, a replica and three sentinels (real processes),
 * the inventory flow polling a PostgreSQL ERP that changes all along, sales created on the store and
 * pulled, exported to the ERP's interface table and acknowledged. Two failovers, without restarting
 * storesync:
 * 1. the primary is SIGKILLed and Sentinel promotes the replica (which had every write);
 * 2. the old primary comes back as a replica, its replication is held back (`CLIENT PAUSE WRITE` on it:
 *    it reads the stream but applies nothing), the master is SIGKILLed and the lagging replica promoted:
 *    the new master lacks the last writes (cursor moves, merges, jobs, sale records).
 * After each, the time from the kill to the store write of an ERP change made after the kill is measured,
 * and work queued after it must be fetched by the workers (bullmq #2466). The end state is checked as the
 * chaos run does: the store holds the ERP's latest figures, no write replaced a newer version with an older
 * one (before the inventory workers held their writes until the re-read, reread-gate.ts, 7 SKUs did in 1 of 4
 * runs), every sale is exported once and acknowledged once.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkFinalValues, checkNoStaleWrites, checkSalesAckedOnce, checkSalesExportedOnce, finalValueMismatches, saleAcks, salesExportCounts } from '../../bench/lib/chaos/checks.js';
import { CHANGES_QUERY, ErpDriver, priceOf } from '../../bench/lib/chaos/erp-driver.js';
import { seededRandom } from '../../bench/lib/random.js';
import type { Config } from '../../src/config/schema.js';
import { startDaemon } from '../../src/daemon.js';
import { migrateInterfaceTables } from '../../src/erp/sinks/migrations.js';
import { openSql } from '../../src/erp/sql-client.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { testConfig } from '../ops/helpers.js';
import { type SentinelSet, startSentinelSet } from '../support/redis-ha.js';

const ADMIN_PG = 'postgres://postgres@127.0.0.1:5432/test';
const database = `ha_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
const erpUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
const SKUS = Array.from({ length: 40 }, (_, i) => `HA-${String(i + 1).padStart(3, '0')}`);
const MARK = 'HA-MARK';
const ACK_STATUS = 2;

let set: SentinelSet;
let sim: Simulator;
let erp: pg.Client;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: ADMIN_PG });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  erp = new pg.Client({ connectionString: erpUrl });
  await erp.connect();
  const sql = openSql(erpUrl);
  await migrateInterfaceTables(sql, { sales: 'storesync_sales', items: 'storesync_sale_items' });
  await sql.close();
  set = await startSentinelSet({ downAfterMs: 1000 });
  sim = await startSimulator({ port: 0, items: [...SKUS, MARK].map((Code) => ({ Code, Stock: 0, Price: 99.99 })), sales: 0, users: 3, clients: 1 });
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await set?.stop();
  await erp?.end();
  const admin = new pg.Client({ connectionString: ADMIN_PG });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

function config(prefix: string): Readonly<Config> {
  return testConfig({
    store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, retry: { attempts: 3, baseDelayMs: 20, maxDelayMs: 200 } },
    redis: { sentinels: set.sentinelNodes.map((node) => ({ ...node })), name: set.name, prefix },
    log: { level: 'silent' },
    inventory: {
      concurrency: 4,
      attempts: 25,
      backoffMs: 100,
      sources: [
        { name: 'erp', kind: 'sql', url: erpUrl, schedule: '*/1 * * * * *', limit: 5000, overlapMs: 10_000, initialCursor: '1970-01-01T00:00:00.000Z', changes: CHANGES_QUERY },
      ],
    },
    sales: {
      enabled: true,
      concurrency: 4,
      attempts: 25,
      backoffMs: 200,
      pull: { schedule: '*/1 * * * * *', statuses: [1], lookbackHours: 48, settleMinutes: 0, pageSize: 50 },
      sink: { kind: 'sql', url: erpUrl },
    },
  });
}

/** Samples /readyz until `stop` is called; resolves with the statuses seen, in order, without repeats. */
function sampleReadiness(url: string): { stop(): Promise<number[]> } {
  const seen: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
        (response) => response.status,
        () => 0,
      );
      if (seen.at(-1) !== status) seen.push(status);
      await sleep(50);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return seen;
    },
  };
}

/** Runs `command` on one data node, on a connection of its own. */
async function onNode<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    return await command(client);
  } finally {
    client.disconnect();
  }
}

/** Prints the queues and state when HA_TEST_LOG is set (set by the test once the daemon runs). */
let diagnose: (() => Promise<void>) | undefined;
let markVersion = 0;
/** Writes a change of the marker SKU into the ERP now; resolves with the time its store write was seen. */
async function markerWritten(): Promise<number> {
  markVersion += 1;
  const version = markVersion;
  await erp.query('INSERT INTO stock_changes (code, stock, price, changed_at) VALUES ($1, $2, $3, now())', [MARK, version, priceOf(version)]);
  let seenAt = 0;
  await waitFor(
    () => {
      // By its price: its stock is less the units open sales hold.
      const write = sim.writes.find((w) => w.code === MARK && w.fields.Price === priceOf(version));
      if (write) seenAt = write.at;
      return write !== undefined;
    },
    { timeoutMs: 45_000, intervalMs: 20, message: `the store write of marker version ${version}` },
  ).catch(async (error: unknown) => {
    await diagnose?.();
    throw error;
  });
  return seenAt;
}

/** Resolves once `count` more sales were exported to the ERP and acknowledged on the store than now. */
async function salesMove(saleIds: readonly number[], count: number): Promise<void> {
  const before = saleIds.length;
  await waitFor(() => saleIds.length >= before + count, { timeoutMs: 30_000, message: `${count} more sales created` });
  const wanted = saleIds.slice(before, before + count);
  await waitFor(
    async () => {
      const exported = await salesExportCounts(erpUrl);
      const acks = saleAcks(sim, ACK_STATUS);
      return wanted.every((id) => (exported.get(id) ?? 0) >= 1 && (acks.get(id) ?? 0) >= 1);
    },
    { timeoutMs: 45_000, intervalMs: 200, message: `sales ${wanted.join(', ')} exported and acknowledged after the failover` },
  );
}

describe('Sentinel failover under a running sync', () => {
  it('carries on through a failover and a failover to a lagging replica: store = ERP, no stale write, each sale once', async () => {
    const prefix = `test-${randomUUID()}`;
    const daemonConfig = config(prefix);
    const daemon = await startDaemon({ config: daemonConfig, logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    const driver = new ErpDriver({ url: erpUrl, skus: SKUS, rate: 40, lateShare: 0.1, maxLateMs: 1000, repeatShare: 0.05, invalidRows: 0, durationS: 30, random: seededRandom(23) });
    await driver.prepare();
    if (process.env.HA_TEST_LOG) {
      diagnose = async () => {
        const redis = createRedis(daemonConfig.redis);
        const { Queue } = await import('bullmq');
        for (const name of ['inventory', 'sales']) {
          const queue = new Queue(name, { connection: redis, prefix });
          console.log(name, JSON.stringify(await queue.getJobCounts()));
          await queue.close();
        }
        for (const worker of [...daemon.inventory.workers, ...daemon.sales.workers]) console.log('worker', worker.name, worker.isRunning(), worker.isPaused(), worker.closing);
        console.log('store writes', sim.writes.length, 'last at', new Date(sim.writes.at(-1)?.at ?? 0).toISOString());
        redis.disconnect();
      };
      const { inventory } = daemon;
      inventory.events.on('inventory:poll:failed', ({ error }) => console.log(`poll failed: ${error.message}`));
      inventory.ticks?.on('schedule:tick', ({ task, fireTime, outcome, error }) => console.log(`tick ${task} ${new Date(fireTime).toISOString()} ${outcome} ${error?.message ?? ''}`));
    }
    const saleIds: number[] = [];
    const selling = setInterval(() => saleIds.push(sim.addSale({ Status: 1, SiteId: 1 }).Id), 250);
    const timings: Record<string, number | string> = {};
    const t0 = Date.now();
    const step = (what: string): void => void (process.env.HA_TEST_LOG && console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`));
    try {
      driver.start();
      await markerWritten();
      await salesMove(saleIds, 3);
      step('running');

      // 1. The primary dies; Sentinel promotes the replica.
      const first = await set.masterPort();
      const readiness = sampleReadiness(daemon.url);
      const killedAt = Date.now();
      await set.primary.kill();
      const markAt = await markerWritten();
      // Not ready while no master answered, ready again after.
      await waitFor(() => fetch(`${daemon.url}/readyz`).then((response) => response.status === 200), { message: '/readyz ready again' });
      timings.readyz = [...(await readiness.stop()), 200].join('→');
      expect(timings.readyz).toContain('503');
      timings.failoverMs = markAt - killedAt;
      step(`failover: marker after ${timings.failoverMs} ms`);
      const second = await set.waitForNewMaster(first);
      expect(second).toBe(set.replica.port);
      // The workers fetch again after the failover: new ERP changes and new sales go through.
      await salesMove(saleIds, 3);

      step('sales after failover');
      // 2. The old primary comes back; Sentinel makes it a replica of the new master.
      await set.primary.start();
      const lagging = set.primary.port;
      // What Sentinel would tell it within seconds; said at once to keep the test short.
      await onNode(lagging, (client) => client.call('REPLICAOF', '127.0.0.1', String(second)));
      await waitFor(async () => /role:slave[\s\S]*master_link_status:up/.test(await onNode(lagging, (client) => client.info('replication'))), {
        timeoutMs: 30_000,
        message: 'the old primary to replicate the new master',
      });
      // It reads the replication stream but applies nothing while paused: the last writes never reach its data.
      step('old primary replicating');
      await onNode(lagging, (client) => client.call('CLIENT', 'PAUSE', '20000', 'WRITE'));
      const writesBefore = sim.writes.length;
      await waitFor(() => sim.writes.length >= writesBefore + 30, { timeoutMs: 30_000, message: 'store writes while the replica lags' });
      await salesMove(saleIds, 2);
      const offsets = await onNode(lagging, (client) => client.info('replication'));
      const read = Number(/slave_read_repl_offset:(\d+)/.exec(offsets)?.[1]);
      const applied = Number(/slave_repl_offset:(\d+)/.exec(offsets)?.[1]);
      expect(read).toBeGreaterThan(applied);
      step(`lag ${read - applied} bytes`);
      const lagKilledAt = Date.now();
      step(`lag kill at ${new Date().toISOString()}`);
      await set.replica.kill();
      // The stream it had read but not applied goes with the dead master's link.
      await onNode(lagging, (client) => client.call('CLIENT', 'UNPAUSE'));
      step(`promoted: ${await set.waitForNewMaster(second)}`);
      const lagMarkAt = await markerWritten();
      timings.laggingFailoverMs = lagMarkAt - lagKilledAt;
      step(`lagging failover: marker after ${timings.laggingFailoverMs} ms`);
      expect(await set.waitForNewMaster(second)).toBe(set.primary.port);
      await salesMove(saleIds, 3);
    } finally {
      clearInterval(selling);
      await driver.stop(30_000);
    }
    try {
      // Drain: every SKU at its ERP figure, every sale exported and acknowledged.
      await waitFor(
        async () => {
          if (finalValueMismatches(sim, driver.model).length > 0) return false;
          const exported = await salesExportCounts(erpUrl);
          const acks = saleAcks(sim, ACK_STATUS);
          return saleIds.every((id) => exported.get(id) === 1 && (acks.get(id) ?? 0) >= 1);
        },
        { timeoutMs: 60_000, intervalMs: 250, message: 'the sync to catch up after the failovers' },
      ).catch(() => undefined);
      const exported = await salesExportCounts(erpUrl);
      const acks = saleAcks(sim, ACK_STATUS);
      const checks = [checkFinalValues(sim, driver.model), checkNoStaleWrites(sim), checkSalesExportedOnce(saleIds, exported), checkSalesAckedOnce(saleIds, acks)];
      console.log(`sentinel failover: ${JSON.stringify(timings)}; ${driver.model.rowsWritten} ERP rows, ${saleIds.length} sales, ${sim.writes.length} store writes`);
      expect(checks.filter((check) => !check.ok).map((check) => `${check.name}: ${check.detail}`)).toEqual([]);
      expect(timings.failoverMs).toBeLessThan(30_000);
      expect(timings.laggingFailoverMs).toBeLessThan(30_000);
    } finally {
      await daemon.close();
      await driver.close();
    }
  }, 150_000);
});
