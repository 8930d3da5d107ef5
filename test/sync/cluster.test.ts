/**
 * The whole daemon on a real three-master Redis Cluster: an inventory sync from a CSV drop, a reconcile against the
 * snapshot, a snapshot diff, and a sales cycle (pulled, reserved, exported to a file sink, acknowledged), with the
 * request budget, the login gate and the tick lock on. Every multi-key Lua script, MULTI and BullMQ's own run there:
 * a key outside the prefix's hash tag would fail with CROSSSLOT and the flows would stop. Afterwards every key on
 * every master is under `{prefix}`, BullMQ's included. A master killed under a running sync: test/ha/cluster-failover.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Daemon, startDaemon } from '../../src/daemon.js';
import { Metrics } from '../../src/metrics.js';
import { formatStoreDate } from '../../src/simulator/clock.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { logCollector, testConfig } from '../ops/helpers.js';
import { type RedisClusterSet, startRedisCluster } from '../support/redis-ha.js';

const TIME_ZONE = 'America/Argentina/Buenos_Aires';
const SKUS = 40;
const prefix = `{cl-${randomUUID().slice(0, 8)}}`;
let cluster: RedisClusterSet;
let sim: Simulator;
let dir: string;
let daemon: Daemon | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
  sim = await startSimulator({ port: 0, items: SKUS, sales: 0, users: 0, clients: 0 });
  dir = await mkdtemp(join(tmpdir(), 'storesync-cluster-'));
}, 90_000);

afterAll(async () => {
  await daemon?.close();
  await sim?.close();
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const code = (i: number): string => `SKU-${String(i).padStart(6, '0')}`;

/** Every key on every master of the cluster. */
async function allKeys(): Promise<string[]> {
  const keys: string[] = [];
  for (const node of cluster.startupNodes) {
    const client = new Redis({ ...node, lazyConnect: true });
    try {
      let cursor = '0';
      do {
        const [next, found] = await client.scan(cursor, 'COUNT', 1000);
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0');
    } finally {
      client.disconnect();
    }
  }
  return keys;
}

describe('storesync on a Redis Cluster', () => {
  it('syncs, reconciles and runs a sales cycle with every key in the prefix hash tag slot', async () => {
    const drop = join(dir, 'drop');
    await mkdir(drop);
    const rows = Array.from({ length: SKUS }, (_, i) => `${code(i + 1)},${100 + i},${10 + i}`);
    const snapshotFile = join(dir, 'all-items.csv');
    await writeFile(snapshotFile, `Code,Stock,Price\n${rows.join('\n')}\n`);
    const salesDir = join(dir, 'sales');
    await mkdir(join(dir, 'diff-drop'));
    const diffFile = join(dir, 'diff.csv');
    // The same prices the sync gives SKUs 10 and 11, so the reconcile finds no difference there.
    await writeFile(diffFile, `Code,Price\n${code(10)},19\n${code(11)},20\n`);
    const config = testConfig({
      redis: { cluster: [...cluster.startupNodes], prefix },
      // The request budget's script runs too (store.rateLimit), beside the login gate's.
      store: {
        baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, timeZone: TIME_ZONE,
        retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 50 }, rateLimit: { max: 10_000, durationMs: 1000 },
      },
      inventory: {
        backoffMs: 10,
        sources: [
          { name: 'erp-csv', kind: 'csv', dir: drop, settleMs: 0, schedule: '0 0 0 1 1 *', snapshotFile },
          // The snapshot diff keeps its fingerprints in Redis (MULTI over several keys of the prefix).
          { name: 'erp-diff', kind: 'csv', dir: join(dir, 'diff-drop'), settleMs: 0, snapshotFile: diffFile, diff: { schedule: '0 0 0 1 1 *' } },
        ],
      },
      sales: { backoffMs: 20, pull: { schedule: '* * * * * *', lookbackHours: 48 }, sink: { kind: 'file', dir: salesDir } },
    });
    const logs = logCollector('info');
    daemon = await startDaemon({ config, logger: logs.logger, metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    const d = daemon;
    await waitFor(async () => (await fetch(`${d.url}/readyz`)).status === 200, { message: '/readyz on the cluster' });

    // 1. A full sync: every row of the drop written to the store.
    await writeFile(join(drop, 'stock.csv'), `Code,Stock,Price\n${rows.join('\n')}\n`);
    const report = await d.inventory.poll('erp-csv');
    expect(report).toMatchObject({ read: SKUS });
    await waitFor(() => Array.from({ length: SKUS }, (_, i) => sim.state.items.get(code(i + 1))?.item.Stock === 100 + i).every(Boolean), {
      message: 'every SKU written to the store',
      timeoutMs: 30_000,
    });

    // 2. A reconcile: the snapshot holds a figure no poll delivered; the reconcile finds and writes it.
    rows[2] = `${code(3)},77,12`;
    await writeFile(snapshotFile, `Code,Stock,Price\n${rows.join('\n')}\n`);
    const reconciled = await d.inventory.reconcile();
    expect(reconciled).toMatchObject({ erpRecords: SKUS + 2, differences: 1, queued: 1 });
    await waitFor(() => sim.state.items.get(code(3))?.item.Stock === 77, { message: 'the reconciled figure written' });

    // A snapshot diff: the first queues every row, the second only what changed.
    expect(await d.inventory.diff('erp-diff')).toMatchObject({ read: 2, changed: 2, queued: 2 });
    await writeFile(diffFile, `Code,Price\n${code(10)},19\n${code(11)},21\n`);
    expect(await d.inventory.diff('erp-diff')).toMatchObject({ read: 2, previous: 2, changed: 1, queued: 1 });
    await waitFor(() => sim.state.items.get(code(11))?.item.Price === 21, { message: 'the diffed price written' });

    // 3. A sales cycle: pulled, exported once to the file sink, acknowledged once.
    const acked = d.sales.events.next('sales:acked');
    sim.addSale({ Id: 7001, SiteId: 1, Status: 1, CreationDate: formatStoreDate(Date.now() - 5 * 60_000, TIME_ZONE) });
    expect(await acked).toMatchObject({ saleId: 7001 });
    const files = (await readdir(salesDir, { recursive: true })).filter((name) => String(name).includes('7001'));
    expect(files).toHaveLength(1);

    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toContain('storesync_redis_up 1');
    expect(metrics).toContain('storesync_redis_failovers_total 0');
    expect(logs.text()).not.toMatch(/CROSSSLOT/);

    // Every key storesync and BullMQ wrote lives under the prefix's hash tag (one slot).
    const keys = await allKeys();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => !key.startsWith(`${prefix}:`))).toEqual([]);
  }, 120_000);
});
