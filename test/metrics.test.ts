/**
 * The values of the metrics catalogue (src/metrics.ts) after real work: an inventory job synced by the worker
 * against the simulator, and a poll of a PostgreSQL source. Names alone are checked by the ops tests.
 */
import { randomUUID } from 'node:crypto';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../src/log.js';
import { Metrics } from '../src/metrics.js';
import { StoreClient } from '../src/store/client.js';
import type { FlowDeps } from '../src/sync/flow.js';
import { startInventoryFlow } from '../src/sync/inventory/index.js';
import { createHarness, type Harness } from './sync/inventory/harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `met_${randomUUID().replace(/-/g, '')}`;
const db = new pg.Client({ connectionString: PG_URL });

let h: Harness;

beforeAll(async () => {
  h = await createHarness([{ Code: 'MT-1', Stock: 1, Price: 10 }]);
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`CREATE TABLE ${schema}.items (code text PRIMARY KEY, stock int, modified timestamptz NOT NULL)`);
});

afterAll(async () => {
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
  await h.close();
});

/** Flow dependencies whose store client reports to the same metrics as the flow. */
function depsWithMetrics(): FlowDeps {
  const base = h.deps({
    inventory: {
      sources: [
        {
          name: 'pg-items',
          kind: 'sql',
          url: PG_URL,
          schedule: '0 0 0 1 1 *',
          changes:
            `SELECT code AS "Code", stock AS "Stock", modified AS cursor FROM ${schema}.items ` +
            'WHERE CAST(:cursor AS timestamptz) IS NULL OR modified >= :cursor ORDER BY modified, code LIMIT :limit',
        },
      ],
    },
  });
  const metrics = new Metrics({ defaultMetrics: false });
  const store = new StoreClient({ config: base.config.store, logger: silentLogger(), metrics });
  return { ...base, metrics, store };
}

describe('metrics after a synced job', () => {
  it('count the rows read, the job by queue and outcome, the store login and PUT, and the sync lag', async () => {
    const deps = depsWithMetrics();
    const flow = await startInventoryFlow(deps, { role: 'all' });
    try {
      await db.query(`INSERT INTO ${schema}.items VALUES ('MT-1', 7, '2025-01-01T00:00:01Z')`);
      const done = flow.events.next('inventory:job:done');
      await flow.poll('pg-items');
      expect(await done).toMatchObject({ sku: 'MT-1', outcome: 'completed' });
    } finally {
      await flow.close();
    }
    const { metrics } = deps;
    const value = async (metric: { get(): Promise<{ values: Array<{ labels: object; value: number; metricName?: string }> }> }, labels: object) =>
      (await metric.get()).values.find((v) => JSON.stringify(v.labels) === JSON.stringify(labels) && !v.metricName?.match(/_(bucket|sum)$/))?.value;

    expect(await value(metrics.erpRecordsRead, { source: 'pg-items' })).toBe(1);
    expect(await value(metrics.jobs, { queue: 'inventory', outcome: 'completed' })).toBe(1);
    expect(await value(metrics.jobs, { queue: 'inventory', outcome: 'failed' })).toBeUndefined();
    expect(await value(metrics.storeLogins, { outcome: 'success' })).toBe(1);
    const puts = (await metrics.storeRequests.get()).values.filter((v) => v.labels.method === 'PUT');
    expect(puts.map((v) => [v.labels.status, v.value])).toEqual([['200', 1]]);
    const lag = (await metrics.syncLag.get()).values.find((v) => v.metricName?.endsWith('_count') && v.labels.flow === 'inventory');
    expect(lag?.value).toBe(1);
    // The exposition shows the same numbers.
    const text = await metrics.registry.metrics();
    expect(text).toContain('storesync_jobs_total{queue="inventory",outcome="completed"} 1');
    expect(text).toContain('storesync_erp_records_read_total{source="pg-items"} 1');
  });
});

describe('a scrape while a collector does not answer (Redis down)', () => {
  it('answers after collectTimeoutMs with the last values and their age, and waits on the pending read instead of starting another', async () => {
    let clock = 1_000_000;
    const metrics = new Metrics({ defaultMetrics: false, collectTimeoutMs: 50, now: () => clock });
    let reads = 0;
    let answer: (() => void) | undefined;
    metrics.addCollector(async () => {
      reads += 1;
      const read = reads;
      // The first read answers at once; the next ones wait until Redis "comes back".
      if (read > 1) await new Promise<void>((resolve) => (answer = resolve));
      metrics.queueJobs.set({ queue: 'inventory', state: 'waiting' }, read * 10);
    });
    const sample = (text: string, name: string): number | undefined => {
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.slice(name.length + 1));
    };
    const within = (promise: Promise<string>): Promise<string> =>
      Promise.race([promise, new Promise<string>((resolve) => setTimeout(() => resolve('render did not answer within 2 s'), 2000))]);

    const first = await within(metrics.render());
    expect(sample(first, 'storesync_queue_jobs{queue="inventory",state="waiting"}')).toBe(10);
    expect(sample(first, 'storesync_redis_gauges_age_seconds')).toBe(0);

    clock += 30_000;
    const stale = await within(metrics.render());
    expect(sample(stale, 'storesync_queue_jobs{queue="inventory",state="waiting"}'), 'the last value read').toBe(10);
    expect(sample(stale, 'storesync_redis_gauges_age_seconds'), 'seconds since the last read').toBe(30);

    clock += 15_000;
    const staler = await within(metrics.render());
    expect(sample(staler, 'storesync_redis_gauges_age_seconds')).toBe(45);
    expect(reads, 'the pending read is waited for, not started again').toBe(2);

    answer?.();
    const fresh = await within(metrics.render());
    expect(sample(fresh, 'storesync_queue_jobs{queue="inventory",state="waiting"}'), 'the read that was pending').toBe(20);
    expect(sample(fresh, 'storesync_redis_gauges_age_seconds')).toBe(0);
  });
});
