import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { type Daemon, startDaemon } from '../../src/daemon.js';
import { TypedEmitter } from '../../src/events.js';
import { Metrics } from '../../src/metrics.js';
import { ActivityLog, LINES_PER_KIND } from '../../src/ops/activity-log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import type { FulfillmentEvents } from '../../src/sync/fulfillment/types.js';
import type { InventoryEvents } from '../../src/sync/inventory/types.js';
import type { SalesEvents } from '../../src/sync/sales/types.js';
import { waitFor } from '../../src/wait-for.js';
import { deleteKeys } from '../support/redis.js';
import { logCollector, testConfig, testPrefix } from './helpers.js';

type Line = Record<string, unknown>;

const redis = new Redis('redis://127.0.0.1:6379/0');
const base = testPrefix();
let runs = 0;
let sim: Simulator;
let dir: string;
let daemon: Daemon | undefined;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, items: 5, sales: 0, users: 0, clients: 0 });
  dir = await mkdtemp(join(tmpdir(), 'storesync-activity-'));
});

afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
});

afterAll(async () => {
  await sim.close();
  await deleteKeys(redis, base);
  redis.disconnect();
  await rm(dir, { recursive: true, force: true });
});

/** A daemon reading one CSV drop folder holding `csv`, polled by hand, with a summary every `summaryIntervalMs`. */
async function startWithCsv(csv: string, logs: ReturnType<typeof logCollector>, summaryIntervalMs: number): Promise<Daemon> {
  runs += 1;
  const drop = join(dir, `drop-${runs}`);
  await mkdir(drop);
  await writeFile(join(drop, 'stock.csv'), csv);
  const config = testConfig({
    redis: { prefix: `${base}:r${runs}` },
    store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 5 } },
    log: { summaryIntervalMs },
    sales: { enabled: false },
    inventory: {
      backoffMs: 10,
      sources: [{ name: 'erp-csv', kind: 'csv', dir: drop, settleMs: 0, schedule: '0 0 0 1 1 *', limit: 5000 }],
    },
  });
  daemon = await startDaemon({ config, logger: logs.logger, metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
  return daemon;
}

/** The summary lines' counts of `flow`, added up. */
function summed(lines: readonly Line[], flow: string): Record<string, number> {
  const total: Record<string, number> = {};
  for (const line of lines.filter((l) => l.summary === true)) {
    for (const [key, n] of Object.entries((line[flow] ?? {}) as Record<string, number>)) total[key] = (total[key] ?? 0) + n;
  }
  return total;
}

/** Fails when a raw JSON line carries a key twice at its top level (pino writes child bindings and fields side by side). */
function expectNoKeyTwice(text: string): void {
  for (const raw of text.split('\n').filter((l) => l.trim() !== '')) {
    const keys = [...raw.matchAll(/[{,]"([A-Za-z]+)":/g)].map((m) => m[1]);
    for (const key of ['source', 'component', 'sku', 'flow', 'msg']) expect(keys.filter((k) => k === key).length, `${key} in ${raw}`).toBeLessThanOrEqual(1);
  }
}

describe('activity log of a running daemon', () => {
  it('logs a poll line, a warn naming a SKU the store does not know (404) and a refused row, and a summary of the period', async () => {
    // At debug level, so that the no-key-twice check below sees every line the run writes.
    const logs = logCollector('debug');
    const d = await startWithCsv('Code,Stock\nSKU-000001,5\nSKU-000002,6\nSKU-404,7\nSKU-000003,-5\n', logs, 100);
    await d.inventory.poll('erp-csv');
    // The summaries of the periods the work spread over add up to every SKU's end.
    await waitFor(() => {
      const inventory = summed(logs.lines(), 'inventory');
      return inventory.written === 2 && inventory.failed === 1 && inventory.refused === 1;
    }, { message: 'summaries counting 2 writes, 1 failure and 1 refusal' });

    const activity = logs.lines().filter((line) => line.component === 'activity');
    expect(activity).toContainEqual(
      expect.objectContaining({
        level: 'info',
        flow: 'inventory',
        kind: 'poll',
        source: 'erp-csv',
        read: 4,
        queued: 3,
        refused: 1,
        msg: 'inventory poll: 4 rows read, 3 SKUs queued, 1 refused',
      }),
    );
    const failed = activity.filter((line) => line.level === 'warn' && line.sku === 'SKU-404');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.msg).toBe(
      'inventory job failed for good: SKU SKU-404: not found on the store (404); set inventory.createMissing to create unknown items',
    );
    const refused = activity.filter((line) => line.level === 'warn' && line.sku === 'SKU-000003');
    expect(refused).toEqual([
      expect.objectContaining({
        source: 'erp-csv',
        msg: 'ERP record refused: erp-csv file stock.csv line 5: SKU-000003: field Stock = -5 breaks "integer 0 to 999999"',
      }),
    ]);
    const summary = activity.find((line) => line.summary === true && (line.inventory as { written?: number } | undefined)?.written);
    expect(summary).toMatchObject({ level: 'info', periodS: expect.any(Number) });
    expect(summary?.msg).toMatch(/^last \d+ s: inventory: \d+ store writes, \d+ failed for good, \d+ SKUs isolated, \d+ retried, \d+ ERP records refused$/);
    // Nothing else about these SKUs above debug: one line per fact.
    const perItem = logs.lines().filter((line) => line.level !== 'debug' && line.component !== 'activity' && (line.sku !== undefined || String(line.msg).includes('SKU')));
    expect(perItem).toEqual([]);
    expectNoKeyTwice(logs.text());
    for (const line of activity) {
      const msg = String(line.msg);
      for (const name of ['erp-csv', 'SKU-404', 'SKU-000003']) expect(msg.split(name).length - 1, msg).toBeLessThanOrEqual(1);
    }
  });

  it('collapses 1,000 SKUs failing with a 404 into a bounded number of lines, by counting them', async () => {
    const logs = logCollector('info');
    const rows = Array.from({ length: 1000 }, (_, i) => `MISSING-${i},${i % 7}`);
    // The default period: the summary comes when the daemon stops.
    const d = await startWithCsv(`Code,Stock\n${rows.join('\n')}\n`, logs, 60_000);
    let failed = 0;
    d.inventory.events.on('inventory:job:done', ({ outcome }) => void (outcome === 'failed' && (failed += 1)));
    const report = await d.inventory.poll('erp-csv');
    expect(report).toMatchObject({ read: 1000, queued: 1000 });
    await waitFor(() => failed === 1000, { timeoutMs: 120_000, message: '1,000 jobs failed' });
    const before = logs.lines().length;
    await d.close();
    const lines = logs.lines();
    const activity = lines.filter((line) => line.component === 'activity');
    expect(activity.filter((line) => line.level === 'warn')).toHaveLength(LINES_PER_KIND);
    expect(activity.filter((line) => line.summary === true)).toEqual([
      expect.objectContaining({
        inventory: expect.objectContaining({ written: 0, failed: 1000, isolated: 1000 }),
        suppressed: { 'inventory:job:failed': 1000 - LINES_PER_KIND },
      }),
    ]);
    // Everything the run wrote after the start line (but the store login): one poll line and the
    // warnings; at close the summary and the stop line.
    const started = lines.findIndex((line) => line.msg === 'storesync started');
    const run = lines.slice(started + 1, before).filter((line) => line.msg !== 'logged in to the store');
    expect(run.map((line) => line.level)).toEqual(['info', ...Array<string>(LINES_PER_KIND).fill('warn')]);
    expect(lines.length - before).toBe(2);
  }, 150_000);
});

describe('ActivityLog', () => {
  it('writes at most LINES_PER_KIND lines of a kind per period and says how many more it suppressed', () => {
    const logs = logCollector('info');
    let now = 1_000_000;
    const activity = new ActivityLog({ logger: logs.logger, summaryIntervalMs: 60_000, now: () => now });
    const inventory = new TypedEmitter<InventoryEvents>();
    const sales = new TypedEmitter<SalesEvents>();
    activity.watchInventory(inventory);
    activity.watchSales(sales);
    for (let i = 0; i < 1000; i++) {
      inventory.emit('inventory:job:done', { sku: `SKU-${i}`, outcome: 'failed', fields: ['Stock'], reason: `SKU SKU-${i}: not found on the store (404)` });
      inventory.emit('inventory:record:refused', { source: 'erp', sku: `BAD-${i}`, reason: `erp row ${i}: BAD-${i}: field Stock = -1 breaks "integer 0 to 999999"` });
      sales.emit('sales:job:failed', { saleId: i, siteId: 1, error: new Error('ERR_ERP_SINK: the ERP refused the row'), willRetry: i % 2 === 0 });
    }
    now += 60_000;
    activity.summarize();
    // Nothing flowed since: no second summary, at the next period nor at close.
    activity.summarize();
    activity.close();
    const lines = logs.lines();
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(3 * LINES_PER_KIND);
    expect(lines.filter((line) => line.summary === true)).toEqual([
      expect.objectContaining({
        periodS: 60,
        inventory: { written: 0, skipped: 0, retried: 0, isolated: 0, failed: 1000, refused: 1000, held: 0 },
        sales: { exported: 0, acked: 0, retried: 500, failed: 500, held: 0 },
        suppressed: { 'inventory:job:failed': 990, 'inventory:record:refused': 990, 'sales:job:failed': 490 },
      }),
    ]);
    expect(lines.find((line) => line.summary === true)?.msg).toBe(
      'last 60 s: inventory: 0 store writes, 1000 failed for good, 0 SKUs isolated, 0 retried, 1000 ERP records refused; ' +
        'sales: 0 exported, 0 acknowledged, 500 failed for good, 500 retried; 990 more like this suppressed (inventory:job:failed); ' +
        '990 more like this suppressed (inventory:record:refused); 490 more like this suppressed (sales:job:failed)',
    );
    expect(lines.find((line) => line.saleId === 1)?.msg).toBe('sale failed for good: sale 1-1: ERR_ERP_SINK: the ERP refused the row');
  });

  it('names the jobs held while the store refuses the credentials (auth_paused) in the summary at shutdown, per flow', () => {
    const logs = logCollector('info');
    const activity = new ActivityLog({ logger: logs.logger, summaryIntervalMs: 60_000 });
    const inventory = new TypedEmitter<InventoryEvents>();
    const fulfillment = new TypedEmitter<FulfillmentEvents>();
    activity.watchInventory(inventory);
    activity.watchFulfillment(fulfillment);
    inventory.emit('inventory:job:done', { sku: 'SKU-1', outcome: 'completed', fields: ['Stock'] });
    for (const sku of ['SKU-2', 'SKU-3', 'SKU-4']) inventory.emit('inventory:job:done', { sku, outcome: 'auth_paused', fields: ['Stock'], reason: 'store refused the credentials' });
    // A 429 pause is not a credentials hold.
    inventory.emit('inventory:job:done', { sku: 'SKU-5', outcome: 'rate_limited', fields: ['Stock'] });
    fulfillment.emit('fulfillment:job:held', { saleId: 9 });
    activity.close();
    const summary = logs.lines().find((line) => line.summary === true);
    expect(summary).toMatchObject({ inventory: { written: 1, held: 3 }, fulfillment: { updated: 0, held: 1 } });
    expect(summary?.msg).toBe(
      'last 0 s: inventory: 1 store writes, 0 failed for good, 0 SKUs isolated, 0 retried, 0 ERP records refused, ' +
        '3 held while the store refuses the credentials (auth_paused: still queued, sent once they are right); ' +
        'fulfillment: 0 shipment updates, 0 failed for good, 0 retried, 0 ERP records refused, ' +
        '1 held while the store refuses the credentials (auth_paused: still queued, sent once they are right)',
    );
  });

  it('warns of a shipment record refused and an update failed for good, and counts updates and retries', () => {
    const logs = logCollector('info');
    const activity = new ActivityLog({ logger: logs.logger, summaryIntervalMs: 60_000 });
    const fulfillment = new TypedEmitter<FulfillmentEvents>();
    activity.watchFulfillment(fulfillment);
    fulfillment.emit('fulfillment:poll:done', { source: 'erp-ship', read: 3, rejected: 1, queued: 2, cursor: null });
    fulfillment.emit('fulfillment:record:refused', { source: 'erp-ship', reason: 'erp-ship row cursor=7: field Status = 99 breaks "a known status"' });
    fulfillment.emit('fulfillment:job:done', { saleId: 4, outcome: 'updated', changed: ['TrackingCode'] });
    fulfillment.emit('fulfillment:job:failed', { saleId: 5, error: new Error('ERR_STORE_NOT_FOUND: the store answered 404'), willRetry: true });
    fulfillment.emit('fulfillment:job:failed', { saleId: 5, error: new Error('ERR_STORE_NOT_FOUND: the store answered 404'), willRetry: false });
    activity.close();
    expect(logs.lines().map((line) => [line.level, line.msg])).toEqual([
      ['info', 'fulfillment poll: 3 rows read, 2 shipment updates queued, 1 refused'],
      ['warn', 'shipment record refused: erp-ship row cursor=7: field Status = 99 breaks "a known status"'],
      ['warn', 'shipment update failed for good: sale 5: ERR_STORE_NOT_FOUND: the store answered 404'],
      ['info', 'last 0 s: fulfillment: 1 shipment updates, 1 failed for good, 1 retried, 1 ERP records refused'],
    ]);
  });

  it('logs a poll or diff only when it moved something, with the counts its kind has', () => {
    const logs = logCollector('info');
    const activity = new ActivityLog({ logger: logs.logger, summaryIntervalMs: 60_000 });
    activity.sourceReport('inventory', { source: 'erp', read: 40, queued: 0, rejected: 0 });
    activity.sourceReport('inventory', { source: 'snap', kind: 'diff', read: 500, queued: 3, rejected: 1, vanished: 2 });
    activity.close();
    expect(logs.lines()).toEqual([
      expect.objectContaining({
        flow: 'inventory',
        kind: 'diff',
        source: 'snap',
        read: 500,
        queued: 3,
        vanished: 2,
        refused: 1,
        msg: 'inventory diff: 500 rows read, 3 SKUs queued, 2 vanished, 1 refused',
      }),
    ]);
  });
});
