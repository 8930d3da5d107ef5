import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import { FileSalesSink } from '../../../src/erp/sinks/file-sink.js';
import { silentLogger } from '../../../src/log.js';
import { ActivityLog } from '../../../src/ops/activity-log.js';
import { QUEUE_NAMES } from '../../../src/queue/connection.js';
import { StoreClient } from '../../../src/store/client.js';
import { pullSales, startSalesFlow } from '../../../src/sync/sales/index.js';
import { waitFor } from '../../../src/wait-for.js';
import { logCollector } from '../../ops/helpers.js';
import { CountingSink, type Harness, startHarness, updatesBySale } from './harness.js';

describe('sales flow under refused store credentials', () => {
  let h: Harness | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('holds the queued sales without spending attempts, and exports and acknowledges them once the password is right', async () => {
    h = await startHarness({ config: { store: { loginBackoff: { baseDelayMs: 100, maxDelayMs: 200 } } } });
    dir = await mkdtemp(join(tmpdir(), 'storesync-sales-'));
    const sink = new CountingSink(new FileSalesSink({ dir }));
    const ids = [1, 2, 3, 4, 5, 6].map((n) => h!.sim.addSale({ Id: 700 + n, SiteId: 1, Status: 1, CreationDate: h!.storeDate(10 * n) }).Id);
    expect(await pullSales(h.deps)).toMatchObject({ queued: ids.length });

    const wrong = new StoreClient({ config: { ...h.config.store, password: 'wrong-password' }, logger: silentLogger() });
    const refusals: number[] = [];
    wrong.events.on('store:auth', (event) => event.outcome === 'failure' && refusals.push(1));
    const failedJobs: unknown[] = [];
    const held = await startSalesFlow({ ...h.deps, store: wrong }, { role: 'worker', sink });
    held.events.on('sales:job:failed', (event) => failedJobs.push(event));
    const logs = logCollector('info');
    const activity = new ActivityLog({ logger: logs.logger, summaryIntervalMs: 60_000 });
    activity.watchSales(held.events);
    try {
      // The jobs came back after the pause and met the refusal again.
      await waitFor(() => refusals.length >= 3, { message: 'three refused logins' });
    } finally {
      await held.close();
      await wrong.close();
    }
    expect(failedJobs).toEqual([]);
    // The shutdown summary names the held jobs, as many as storesync_jobs_total counted auth_paused.
    activity.close();
    const heldCount = (await h.deps.metrics.jobs.get()).values.find((v) => v.labels.queue === 'sales' && v.labels.outcome === 'auth_paused')?.value ?? 0;
    expect(heldCount).toBeGreaterThanOrEqual(ids.length);
    expect(logs.lines().find((line) => line.summary === true)?.msg).toMatch(
      new RegExp(`^last \\d+ s: sales: 0 exported, 0 acknowledged, 0 failed for good, 0 retried, ${heldCount} held while the store refuses the credentials \\(auth_paused`),
    );
    expect(sink.exports.size).toBe(0);
    const queue = new Queue(QUEUE_NAMES.sales, { connection: h.redis, prefix: h.prefix });
    const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed', 'failed', 'active']);
    expect(jobs).toHaveLength(ids.length);
    expect(jobs.every((job) => job.attemptsMade === 0 && job.finishedOn === undefined)).toBe(true);
    await queue.close();

    const right = await startSalesFlow(h.deps, { role: 'worker', sink });
    try {
      await waitFor(() => updatesBySale(h!.sim).size === ids.length, { message: 'every sale acknowledged' });
    } finally {
      await right.close();
    }
    expect([...sink.exports.keys()].sort()).toEqual(ids);
  });
});
