import { readFile } from 'node:fs/promises';

import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';

import { type DemoHandles, runDemo } from '../../src/cli/demo/run-demo.js';
import { sparePort } from '../../src/queue/redis-server.js';
import { cli } from '../helpers/cli.js';
import { testPrefix } from '../ops/helpers.js';
import { deleteKeys, dumpPrefix, listKeys } from '../support/redis.js';

const redis = new Redis('redis://127.0.0.1:6379/0');
const prefix = testPrefix();

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('storesync demo --once', () => {
  it('syncs ERP changes, fixes the drift the reconcile finds, exports and acknowledges sales and applies a shipment, leaking no secret', async () => {
    let stdout = '';
    let stderr = '';
    let handles: DemoHandles | undefined;
    let metrics = '';
    const hashes: string[] = [];
    let snapshotText = '';
    const stockAfter = new Map<string, unknown>();
    let reserved = new Set<string>();
    let stored = '';
    const published = new Map<string, { erpStock: number; value: number }>();
    const report = await runDemo({
      io: {
        env: { PATH: process.env.PATH ?? '' },
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        stopSignal: new AbortController().signal,
      },
      once: true,
      port: 0,
      prefix,
      logLevel: 'debug',
      hooks: {
        started: (h) => {
          handles = h;
        },
        stopping: async (h) => {
          metrics = await (await fetch(`${h.daemon.url}/metrics`)).text();
          hashes.push(...h.simulator.state.hashes.keys());
          snapshotText = await readFile(h.snapshot.file, 'utf8');
          // Read before the demo ends: it removes its keys on exit.
          reserved = new Set(await redis.smembers(`${prefix}:state:inv:resskus`));
          stored = [...(await dumpPrefix(redis, prefix))].flat().join('\n');
          for (const sku of h.snapshot.drifted) {
            stockAfter.set(sku, h.simulator.state.items.get(sku)?.item.Stock);
            const answer = await fetch(`${h.daemon.url}/admin/inventory/${sku}`, { headers: { authorization: `Bearer ${h.token}` } });
            published.set(sku, ((await answer.json()) as { published: { erpStock: number; value: number } }).published);
          }
        },
      },
    });

    expect(report?.inventory.itemsUpdated).toBeGreaterThan(100);
    expect(report?.sales.exported).toBeGreaterThan(0);
    expect(report?.sales.acknowledged).toBeGreaterThanOrEqual(report?.sales.exported ?? 1);
    expect(report?.fulfillment.updated).toBeGreaterThan(0);
    expect(stdout).toMatch(/reconcile\s+\d+ ERP snapshot records against \d+ store items: [1-9]\d* differences \(SKU-/);

    // The reconcile found exactly the SKUs the demo's snapshot made differ, and the store now has the snapshot's values.
    const reconcile = report?.reconcile;
    expect(reconcile?.differences).toBeGreaterThan(0);
    expect(reconcile?.queued).toBeGreaterThan(0);
    expect(handles?.snapshot.drifted.length).toBeGreaterThan(0);
    // The differences are the SKUs the snapshot made differ, and SKUs whose published stock is lower
    // than the store's because a pulled sale reserves units the simulator's seeded stock never lost.
    const differing = new Set(reconcile?.sample.map((d) => d.sku));
    for (const sku of handles?.snapshot.drifted ?? []) expect(differing).toContain(sku);
    for (const sku of differing) if (!handles?.snapshot.drifted.includes(sku)) expect(reserved, sku).toContain(sku);
    const [header = '', ...rows] = snapshotText.trim().split('\n').map((line) => line.split(';'));
    const stockColumn = header.indexOf('Stock');
    for (const difference of reconcile?.sample.filter((d) => handles?.snapshot.drifted.includes(d.sku)) ?? []) {
      expect(difference.field).toBe('Stock');
      const snapshotStock = Number(rows.find((row) => row[0] === difference.sku)?.[stockColumn]);
      // The reconcile compares the store with the published stock: the snapshot's less the units of
      // store sales the ERP has not booked (the demo's sales reserve some).
      expect(difference.erp).toBeLessThanOrEqual(snapshotStock);
      expect(difference.store).not.toBe(difference.erp);
      expect(published.get(difference.sku)?.erpStock, difference.sku).toBe(snapshotStock);
      expect(stockAfter.get(difference.sku), difference.sku).toBe(published.get(difference.sku)?.value);
    }
    expect(stdout).toContain('one full cycle done');
    expect(stdout).toMatch(/ERP -> store\s+\d+ rows read/);
    expect(stdout).toContain('/admin/queues');
    expect(metrics).toContain('storesync_jobs_total{queue="inventory",outcome="completed"}');

    const secrets = [handles?.token, handles?.config.store.password, ...hashes].filter((s): s is string => typeof s === 'string' && s.length > 0);
    expect(hashes.length).toBeGreaterThan(0);
    expect(secrets.length).toBeGreaterThan(2);
    expect(stored.length).toBeGreaterThan(0);
    expect(await listKeys(redis, prefix), 'keys left after the demo').toEqual([]);
    for (const secret of secrets) {
      expect(stderr, 'logs').not.toContain(secret);
      expect(metrics, '/metrics').not.toContain(secret);
      expect(stored, 'Redis').not.toContain(secret);
    }
    expect(stderr).toContain('"level":"debug"');
  });

  it('says in one line to install redis-server when no Redis answers and none can be started', async () => {
    const result = await cli(['demo', '--once', '--port', '0'], { REDIS_URL: `redis://127.0.0.1:${await sparePort()}/0`, PATH: '/nonexistent' });
    // The documented exit code of a demo without Redis (README, "The CLI").
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('install');
    expect(result.stderr).toContain('redis-server');
  });
});

describe('storesync demo', () => {
  it('prints the URLs and the admin token, serves the dashboard with them, and stops on the signal', async () => {
    const controller = new AbortController();
    let stdout = '';
    let dashboardStatus = 0;
    const demoPrefix = testPrefix();
    try {
      await runDemo({
        io: {
          env: { PATH: process.env.PATH ?? '' },
          stdout: { write: (text: string) => (stdout += text) },
          stderr: { write: () => undefined },
          stopSignal: controller.signal,
        },
        once: false,
        port: 0,
        prefix: demoPrefix,
        hooks: {
          started: (h) => {
            void fetch(`${h.daemon.url}/admin/queues`, { headers: { authorization: `Bearer ${h.token}` } }).then((response) => {
              dashboardStatus = response.status;
              controller.abort('SIGINT');
            });
          },
        },
      });
    } finally {
      await deleteKeys(redis, demoPrefix);
    }
    expect(dashboardStatus).toBe(200);
    expect(stdout).toMatch(/dashboard\s+http:\/\/127\.0\.0\.1:\d+\/admin\/queues/);
    expect(stdout).toMatch(/metrics\s+http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(stdout).toMatch(/store\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/admin token\s+\S{20,}/);
    expect(stdout).toContain('stopping the demo');
  });

  it('removes its Redis keys when stopped (Ctrl-C, SIGTERM)', async () => {
    const controller = new AbortController();
    const demoPrefix = testPrefix();
    let keysWhileRunning = 0;
    try {
      await runDemo({
        io: {
          env: { PATH: process.env.PATH ?? '' },
          stdout: { write: () => undefined },
          stderr: { write: () => undefined },
          stopSignal: controller.signal,
        },
        once: false,
        port: 0,
        prefix: demoPrefix,
        hooks: {
          started: (h) => {
            // Stopped once the daemon has written something of its own under the prefix.
            void h.daemon.inventory.poll('demo-erp').then(async () => {
              keysWhileRunning = (await listKeys(redis, demoPrefix)).length;
              controller.abort('SIGTERM');
            });
          },
        },
      });
      expect(keysWhileRunning).toBeGreaterThan(0);
      expect(await listKeys(redis, demoPrefix)).toEqual([]);
    } finally {
      await deleteKeys(redis, demoPrefix);
    }
  });
});
