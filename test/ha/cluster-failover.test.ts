/**
 * Redis Cluster failover under a running sync: three masters with a replica each (real processes), the inventory flow
 * polling a PostgreSQL ERP that changes all along, sales created on the store every 250 ms, pulled, exported to the
 * ERP's interface table and acknowledged (running-sync.ts, shared with the Sentinel test). The master owning the
 * prefix's hash tag slot (every key of storesync and BullMQ) is SIGKILLed and its replica promoted by the cluster,
 * without restarting storesync. The time from the kill to the store write of an ERP change made after it is measured,
 * new sales must go through, the failover is counted, and the end state is checked as the Sentinel test and the chaos
 * run do: the store holds the ERP's latest figures, no write replaced a newer version with an older one, every sale is
 * exported once and acknowledged once.
 */
import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startDaemon } from '../../src/daemon.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import type { FailoverEvent } from '../../src/queue/master-watch.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { testConfig } from '../ops/helpers.js';
import { onRedisNode, type RedisClusterSet, startRedisCluster } from '../support/redis-ha.js';
import { createErpDatabase, type ErpDatabase, RunningSync, runningSyncConfig, simulatorItems } from './running-sync.js';

let cluster: RedisClusterSet;
let sim: Simulator;
let erp: ErpDatabase;

beforeAll(async () => {
  erp = await createErpDatabase();
  cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
  sim = await startSimulator({ port: 0, items: simulatorItems(), sales: 0, users: 3, clients: 1 });
}, 90_000);

afterAll(async () => {
  await sim?.close();
  await cluster?.stop();
  await erp?.drop();
});

/** The port of the master owning `key`'s slot, from a cluster client's slot table. */
async function slotOwner(key: string): Promise<number> {
  const probe = new Redis.Cluster(cluster.startupNodes.map((node) => ({ ...node })));
  try {
    const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', key));
    await probe.ping();
    return Number(probe.slots[slot]?.[0]?.split(':')[1]);
  } finally {
    probe.disconnect();
  }
}


describe('Redis Cluster failover under a running sync', () => {
  it('carries on when the master of the prefix slot is SIGKILLed and its replica promoted, then again to a lagging replica: store = ERP, no stale write, each sale once', async () => {
    const prefix = `{clf-${randomUUID().slice(0, 8)}}`;
    const config = testConfig({
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, retry: { attempts: 3, baseDelayMs: 20, maxDelayMs: 200 } },
      redis: { cluster: [...cluster.startupNodes], prefix, failoverTimeoutMs: 6000 },
      log: { level: 'silent' },
      ...runningSyncConfig(erp.url),
    });
    const daemon = await startDaemon({ config, logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    const sync = new RunningSync(sim, erp, 29);
    const timings: Record<string, number> = {};
    const t0 = Date.now();
    const step = (what: string): void => void (process.env.HA_TEST_LOG && console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`));
    try {
      await sync.start();
      await sync.markerWritten();
      await sync.salesMove(3);
      await waitFor(() => daemon.masterWatch.known, { message: 'the master identity' });
      const failovers: FailoverEvent[] = [];
      daemon.masterWatch.onFailover((event) => failovers.push(event));
      step('running');

      // 1. The master of the prefix's slot dies; the cluster promotes its replica (which had every write).
      const first = await slotOwner(prefix);
      const victim = cluster.nodes.find((node) => node.port === first);
      expect(victim).toBeDefined();
      const victimRunId = daemon.masterWatch.known?.runId;
      const killedAt = Date.now();
      await victim?.kill();
      // An ERP change made after the kill reaches the store through the promoted replica.
      timings.failoverMs = (await sync.markerWritten()) - killedAt;
      step(`failover: marker after ${timings.failoverMs} ms`);
      await cluster.waitForFailover(first);
      step('cluster ok');
      const second = await slotOwner(prefix);
      expect(second).not.toBe(first);
      // The workers fetch again after the failover: new sales go through.
      await sync.salesMove(3);
      // Sales went through the promoted replica, over connections the watch checks as they reconnect: the
      // failover is known by now or within a moment. Bounded, then asserted on what was seen.
      await waitFor(() => failovers.length > 0, { message: 'the master watch to report the failover', timeoutMs: 5000 }).catch(() => undefined);
      expect(failovers.map(({ from }) => from.runId), 'the master watch reported no failover of the killed master').toContain(victimRunId);
      expect(await (await fetch(`${daemon.url}/metrics`)).text(), 'the failover was seen but not counted').toMatch(/storesync_redis_failovers_total [1-9]/);

      step('sales after failover');
      // 2. The old master comes back: its nodes.conf makes it a replica of the new one.
      await victim?.start();
      await waitFor(async () => /role:slave[\s\S]*master_link_status:up/.test(await onRedisNode(first, (client) => client.info('replication'))), {
        timeoutMs: 30_000,
        message: 'the old master to replicate the new one',
      });
      step('old master replicating');
      // It reads the replication stream but applies nothing while paused: the last writes never reach its data.
      const lag = await sync.lagReplica(first);
      expect(lag).toBeGreaterThan(0);
      step(`lag ${lag} bytes`);
      const lagKilledAt = Date.now();
      await cluster.nodes.find((node) => node.port === second)?.kill();
      // The stream it had read but not applied goes with the dead master's link.
      await onRedisNode(first, (client) => client.call('CLIENT', 'UNPAUSE'));
      timings.laggingFailoverMs = (await sync.markerWritten()) - lagKilledAt;
      step(`lagging failover: marker after ${timings.laggingFailoverMs} ms`);
      await cluster.waitForFailover(second);
      expect(await slotOwner(prefix)).toBe(first);
      await sync.salesMove(3);
    } finally {
      await sync.stop();
    }
    step('stopped');
    try {
      const { failed, summary } = await sync.drainAndCheck();
      step('drained');
      console.log(`cluster failover: ${JSON.stringify(timings)}; ${summary}`);
      expect(failed).toEqual([]);
      expect(timings.failoverMs).toBeLessThan(30_000);
      expect(timings.laggingFailoverMs).toBeLessThan(30_000);
    } finally {
      await daemon.close();
      step('daemon closed');
      await sync.close();
      step('sync closed');
    }
  }, 150_000);
});
