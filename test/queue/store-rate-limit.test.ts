import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { formatStoreDate } from '../../src/simulator/clock.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { StoreClient } from '../../src/store/client.js';
import { storeRateLimiter } from '../../src/store/redis-request-limiter.js';
import type { FlowDeps } from '../../src/sync/flow.js';
import { openInventoryRuntime } from '../../src/sync/inventory/index.js';
import { pullSales } from '../../src/sync/sales/index.js';
import { waitFor } from '../../src/wait-for.js';
import { BUILD_TIMEOUT_MS, freshBuild } from '../support/fresh-build.js';
import { deleteKeys } from '../support/redis.js';
import { stage } from '../sync/inventory/harness.js';

const REDIS_URL = 'redis://127.0.0.1:6379/0';
const TIME_ZONE = 'America/Argentina/Buenos_Aires';
/** The budget under test: 8 store requests per second for everything together. */
const LIMIT = { max: 8, durationMs: 1000 };

/** The most requests found in any window of `durationMs` (starting at a request) of an arrival log. */
function busiestWindow(times: readonly number[], durationMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let busiest = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end += 1) {
    while ((sorted[end] as number) - (sorted[start] as number) >= durationMs) start += 1;
    busiest = Math.max(busiest, end - start + 1);
  }
  return busiest;
}

describe('store.rateLimit shared by two worker processes and a flow mix', () => {
  let sim: Simulator;
  let dir: string;
  const prefix = `test-${randomUUID()}`;
  const redis = createRedis(REDIS_URL);
  const children: ChildProcess[] = [];
  const skus = Array.from({ length: 24 }, (_, i) => `RL-${i}`);
  const saleIds = Array.from({ length: 10 }, (_, i) => 500 + i);

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: skus.map((Code) => ({ Code, Stock: 1, Price: 100 })), sales: 0, users: 0, clients: 0, timeZone: TIME_ZONE });
    dir = await mkdtemp(join(tmpdir(), 'storesync-rate-'));
  });
  // The worker processes run bin/storesync.js, that is dist/.
  beforeAll(() => freshBuild(), BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await sim.close();
    await deleteKeys(redis, prefix);
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts `storesync run --role worker` in its own process and resolves once it has started. */
  async function startWorkerProcess(configFile: string): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['bin/storesync.js', '--config', configFile, 'run', '--role', 'worker'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
    });
    children.push(child);
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('storesync started')) resolve();
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`worker process exited with ${code} before starting:\n${output}`)));
    });
    return child;
  }

  it('keeps every one-second window at the store within the limit while all the work completes', async () => {
    const settings = {
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, timeZone: TIME_ZONE, rateLimit: LIMIT, retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 50 } },
      redis: { url: REDIS_URL, prefix },
      http: { port: 0 },
      log: { level: 'info' },
      inventory: { concurrency: 8, attempts: 5, backoffMs: 50 },
      sales: { enabled: false, concurrency: 4, attempts: 5, backoffMs: 50, sink: { kind: 'file', dir: join(dir, 'sales') } },
    };
    const configFile = join(dir, 'config.yaml');
    await writeFile(configFile, stringify(settings));
    await Promise.all([startWorkerProcess(configFile), startWorkerProcess(configFile)]);

    // This process takes part too: the sales pull and its own reads come out of the same budget.
    const config = loadConfig({ env: {}, overrides: { ...settings, log: { level: 'silent' } } });
    const connections = [createRedis(REDIS_URL)];
    const connect = () => {
      const connection = createRedis(REDIS_URL);
      connections.push(connection);
      return connection;
    };
    const limiter = storeRateLimiter(config.store, prefix, connect);
    const store = new StoreClient({ config: config.store, logger: silentLogger(), ...(limiter ? { limiter } : {}) });
    const deps: FlowDeps = { config, connect, store, logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }) };
    const inventory = openInventoryRuntime(deps);
    try {
      sim.resetCounters();
      // The sales carry generated lines: each holds its units off the published figure until the ERP
      // takes them, so a SKU's last write is its ERP stock less what the sales reserve (written before or
      // after the sale is pulled: either order is right, the last write is what counts).
      const reserved = new Map<string, number>();
      for (const id of saleIds) {
        const sale = sim.addSale({ Id: id, SiteId: 1, Status: 1, CreationDate: formatStoreDate(Date.now() - 10 * 60_000, TIME_ZONE) });
        for (const line of sale.Items) reserved.set(line.Code, (reserved.get(line.Code) ?? 0) + line.Quantity);
      }
      const lastWrite = (sku: string) => sim.writes.findLast((write) => write.code === sku)?.fields.Stock;
      for (const [i, sku] of skus.entries()) await stage(inventory, sku, { Stock: 100 + i }, 1);
      await pullSales(deps);
      for (const sku of skus.slice(0, 4)) await store.inventory.get({ code: sku });

      await waitFor(
        () =>
          skus.every((sku, i) => lastWrite(sku) === 100 + i - (reserved.get(sku) ?? 0)) &&
          saleIds.every((id) => sim.saleUpdates.some((update) => update.saleId === id)),
        { timeoutMs: 120_000, message: 'every inventory write and every sale acknowledgement' },
      );
    } finally {
      await inventory.close();
      await store.close();
      for (const connection of connections) connection.disconnect();
    }
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));

    const log = sim.requestLog();
    // Logins, the pull, reads, inventory writes, sale reads and acknowledgements: all counted.
    expect(log.length).toBeGreaterThanOrEqual(skus.length + 2 * saleIds.length + 4);
    expect(new Set(log.map((entry) => entry.endpoint))).toEqual(
      new Set(['GET /Api/Auth', 'GET /Api/Sale', 'GET /Api/Inventory/Get', 'PUT /Api/Inventory', 'GET /Api/Sale/{id}', 'PUT /Api/Sale/{id}']),
    );
    expect(busiestWindow(log.map((entry) => entry.at), LIMIT.durationMs)).toBeLessThanOrEqual(LIMIT.max);
  }, 150_000);
});
