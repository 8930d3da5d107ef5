/**
 * The snapshot diff at scale (issue 22): a table of `skus` SKUs without a change column, diffed once
 * (the first diff queues every SKU) and then, in a fresh daemon process so that its peak RSS is the
 * diff's own, again after `changedShare` of the rows changed. Goals: ≤ 5 s of daemon CPU and ≤ 200 MB
 * peak RSS for 100,000 SKUs with 1 % changed, only the changed SKUs written, and fingerprints of at
 * most 100 bytes of Redis per SKU (MEMORY USAGE of the fingerprint hash, every field sampled).
 */
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { sku } from './bench-erp.js';
import { startDaemonProcess } from './daemon-process.js';
import type { BenchEnvironment } from './environment.js';
import type { BenchResult } from './results.js';
import { round } from './stats.js';

const CONCURRENCY = 16;
const SOURCE = 'bench-diff';

const stockOf = (i: number): number => (i * 37) % 1000;
const priceOf = (i: number): number => round(10 + (i % 500) / 100);

/** Runs the benchmark; returns the result to store. */
export async function diffBench(env: BenchEnvironment, options: { skus: number; changedShare: number }, log: (line: string) => void): Promise<Omit<BenchResult, 'run'>> {
  const { skus, changedShare } = options;
  const every = Math.round(1 / changedShare);
  for (let start = 0; start < skus; start += 100_000) {
    const count = Math.min(100_000, skus - start);
    await env.sim.putItems(Array.from({ length: count }, (_, k) => ({ Code: sku(start + k + 1), Stock: stockOf(start + k + 1), Price: priceOf(start + k + 1) })));
  }
  await env.erp.pool.query('DROP TABLE IF EXISTS diff_items; CREATE TABLE diff_items (id integer PRIMARY KEY, code text NOT NULL, stock integer NOT NULL, price numeric(12, 2) NOT NULL)');
  await env.erp.pool.query(
    `INSERT INTO diff_items SELECT i, 'SKU-' || lpad(i::text, 6, '0'), (i * 37) % 1000, round(10 + (i % 500) / 100.0, 2) FROM generate_series(1, ${skus}) AS i`,
  );
  const probe = await env.erp.pool.query('SELECT code FROM diff_items WHERE id = 1');
  if ((probe.rows[0] as { code: string }).code !== sku(1)) throw new Error(`the table's codes (${(probe.rows[0] as { code: string }).code}) are not the store's (${sku(1)})`);
  const source = {
    name: SOURCE,
    kind: 'sql',
    url: env.erp.url,
    limit: 5000,
    // No change column: the diff is this source's only schedule, never firing during the run.
    snapshot: 'SELECT code AS "Code", stock AS "Stock", price AS "Price" FROM diff_items',
    diff: { schedule: '0 0 0 1 1 *' },
  };
  const config = env.daemonConfig({ concurrency: CONCURRENCY, sources: [source] });
  const prefix = (config.redis as { prefix: string }).prefix;

  // The first diff queues every SKU; nothing was acknowledged yet, so each is written once.
  const first = await startDaemonProcess(config, 'all', join(env.logDir, 'daemon-diff-first.log'), env.daemonExecArgv);
  let firstRun;
  try {
    firstRun = await first.diff(SOURCE, skus, 1_800_000);
    await first.drain(60_000);
  } finally {
    await first.stop();
  }
  log(`diff: first diff of ${skus} SKUs queued ${String(firstRun.report.queued)} in ${Math.round(firstRun.producedMs)} ms`);

  const redis = new Redis(env.redis.url, { maxRetriesPerRequest: 1 });
  let fingerprintBytes: number;
  try {
    fingerprintBytes = Number(await redis.call('MEMORY', 'USAGE', `${prefix}:state:inv:fp:${SOURCE}`, 'SAMPLES', '0'));
  } finally {
    redis.disconnect();
  }

  const changed = (await env.erp.pool.query(`UPDATE diff_items SET stock = stock + 1 WHERE id % ${every} = 0`)).rowCount ?? 0;
  const second = await startDaemonProcess(config, 'all', join(env.logDir, 'daemon-diff.log'), env.daemonExecArgv);
  let run;
  let puts;
  try {
    const before = await env.sim.inventoryPuts();
    run = await second.diff(SOURCE, changed, 900_000);
    await second.drain(60_000);
    puts = (await env.sim.inventoryPuts()) - before;
  } finally {
    await second.stop();
  }
  const report = run.report as { read: number; changed: number; queued: number; vanished: number; held: number };
  const perSku = fingerprintBytes / skus;
  log(
    `diff of ${skus} SKUs, ${changed} changed: ${report.queued} queued, ${puts} PUTs, ${Math.round(run.cpuMs)} ms CPU (${Math.round(run.producedMs)} ms to diff), ` +
      `peak RSS ${run.maxRssMiB} MiB (${run.rssBeforeMiB} MiB before), fingerprints ${round(perSku, 1)} bytes/SKU`,
  );
  return {
    name: 'diff',
    data: { skus, changed, first: firstRun, run: { ...run, putsSent: puts }, fingerprintBytes },
    summary: [
      {
        measure: `daemon CPU, diff of ${skus} SKUs with ${changedShare * 100}% changed (reading, diffing, queueing and the PUTs)`,
        value: `${round(run.cpuMs / 1000, 2)} s (wall ${round(run.ms / 1000, 1)} s, diffing ${round(run.producedMs / 1000, 1)} s)`,
        baseline: 'goal ≤ 5 s',
        verdict: run.cpuMs <= 5000 ? 'goal met' : 'goal missed',
      },
      {
        measure: 'peak RSS of the daemon process during that diff (a fresh process)',
        value: `${run.maxRssMiB} MiB`,
        baseline: 'goal ≤ 200 MB',
        verdict: run.maxRssMiB * 1.048576 <= 200 ? 'goal met' : 'goal missed',
      },
      {
        measure: 'SKUs queued and PUTs sent by that diff',
        value: `${report.queued} queued, ${puts} PUTs`,
        baseline: `${changed} changed rows`,
        verdict: report.queued === changed && puts === changed ? 'only the changed (goal met)' : 'NOT only the changed',
      },
      {
        measure: 'Redis memory of the fingerprints (MEMORY USAGE … SAMPLES 0), per SKU',
        value: `${round(perSku, 1)} bytes`,
        baseline: 'goal ≤ 100 bytes',
        verdict: perSku <= 100 ? 'goal met' : 'goal missed',
      },
      {
        measure: `first diff of ${skus} SKUs (no fingerprints): queues every SKU`,
        value: `${String(firstRun.report.queued)} queued, diffing ${round(firstRun.producedMs / 1000, 1)} s, ${round(firstRun.cpuMs / 1000, 1)} s CPU with the PUTs`,
        baseline: `${skus} SKUs`,
        verdict: firstRun.report.queued === skus ? 'all queued' : 'NOT all queued',
      },
    ],
  };
}
