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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Config } from '../../src/config/schema.js';
import { startDaemon } from '../../src/daemon.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { testConfig } from '../ops/helpers.js';
import { onRedisNode, type SentinelSet, startSentinelSet } from '../support/redis-ha.js';
import { createErpDatabase, type ErpDatabase, RunningSync, runningSyncConfig, simulatorItems } from './running-sync.js';

let set: SentinelSet;
let sim: Simulator;
let erp: ErpDatabase;

beforeAll(async () => {
  erp = await createErpDatabase();
  set = await startSentinelSet({ downAfterMs: 1000 });
  sim = await startSimulator({ port: 0, items: simulatorItems(), sales: 0, users: 3, clients: 1 });
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await set?.stop();
  await erp?.drop();
});

function config(prefix: string): Readonly<Config> {
  return testConfig({
    store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, retry: { attempts: 3, baseDelayMs: 20, maxDelayMs: 200 } },
    redis: { sentinels: set.sentinelNodes.map((node) => ({ ...node })), name: set.name, prefix },
    log: { level: 'silent' },
    ...runningSyncConfig(erp.url),
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


describe('Sentinel failover under a running sync', () => {
  it('carries on through a failover and a failover to a lagging replica: store = ERP, no stale write, each sale once', async () => {
    const prefix = `test-${randomUUID()}`;
    const daemonConfig = config(prefix);
    const daemon = await startDaemon({ config: daemonConfig, logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    const sync = new RunningSync(sim, erp, 23);
    if (process.env.HA_TEST_LOG) {
      sync.diagnose = async () => {
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
    const timings: Record<string, number | string> = {};
    const t0 = Date.now();
    const step = (what: string): void => void (process.env.HA_TEST_LOG && console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`));
    try {
      await sync.start();
      await sync.markerWritten();
      await sync.salesMove(3);
      step('running');

      // 1. The primary dies; Sentinel promotes the replica.
      const first = await set.masterPort();
      const readiness = sampleReadiness(daemon.url);
      const killedAt = Date.now();
      await set.primary.kill();
      const markAt = await sync.markerWritten();
      // Not ready while no master answered, ready again after.
      await waitFor(() => fetch(`${daemon.url}/readyz`).then((response) => response.status === 200), { message: '/readyz ready again' });
      timings.readyz = [...(await readiness.stop()), 200].join('→');
      expect(timings.readyz).toContain('503');
      timings.failoverMs = markAt - killedAt;
      step(`failover: marker after ${timings.failoverMs} ms`);
      const second = await set.waitForNewMaster(first);
      expect(second).toBe(set.replica.port);
      // The workers fetch again after the failover: new ERP changes and new sales go through.
      await sync.salesMove(3);

      step('sales after failover');
      // 2. The old primary comes back; Sentinel makes it a replica of the new master.
      await set.primary.start();
      const lagging = set.primary.port;
      // What Sentinel would tell it within seconds; said at once to keep the test short.
      await onRedisNode(lagging, (client) => client.call('REPLICAOF', '127.0.0.1', String(second)));
      await waitFor(async () => /role:slave[\s\S]*master_link_status:up/.test(await onRedisNode(lagging, (client) => client.info('replication'))), {
        timeoutMs: 30_000,
        message: 'the old primary to replicate the new master',
      });
      // It reads the replication stream but applies nothing while paused: the last writes never reach its data.
      step('old primary replicating');
      const lag = await sync.lagReplica(lagging);
      expect(lag).toBeGreaterThan(0);
      step(`lag ${lag} bytes`);
      const lagKilledAt = Date.now();
      step(`lag kill at ${new Date().toISOString()}`);
      await set.replica.kill();
      // The stream it had read but not applied goes with the dead master's link.
      await onRedisNode(lagging, (client) => client.call('CLIENT', 'UNPAUSE'));
      step(`promoted: ${await set.waitForNewMaster(second)}`);
      const lagMarkAt = await sync.markerWritten();
      timings.laggingFailoverMs = lagMarkAt - lagKilledAt;
      step(`lagging failover: marker after ${timings.laggingFailoverMs} ms`);
      expect(await set.waitForNewMaster(second)).toBe(set.primary.port);
      await sync.salesMove(3);
    } finally {
      await sync.stop();
    }
    try {
      const { failed, summary } = await sync.drainAndCheck();
      console.log(`sentinel failover: ${JSON.stringify(timings)}; ${summary}`);
      expect(failed).toEqual([]);
      expect(timings.failoverMs).toBeLessThan(30_000);
      expect(timings.laggingFailoverMs).toBeLessThan(30_000);
    } finally {
      await daemon.close();
      await sync.close();
    }
  }, 150_000);
});
