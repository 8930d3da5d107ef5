/**
 * Benchmark 2: the reconcile at scale. The store and the ERP hold the same SKUs with a share of them
 * different; the reconcile must send exactly the differences, and nothing when there are none. Its
 * wall time is set beside the least work any reconcile must do, measured raw in the same run: read
 * the store's inventory once, read the ERP snapshot once, and PUT the differences.
 */
import { join } from 'node:path';

import pg from 'pg';
import { request } from 'undici';

import { waitFor } from '../../src/wait-for.js';
import { benchSource, type ErpRow, sku } from './bench-erp.js';
import { startDaemonProcess } from './daemon-process.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import { login, rawPutLoop } from './raw-loops.js';
import { rawReconcileWork, wallRow } from './raw-reconcile.js';
import type { BenchResult } from './results.js';
import { ratio, round } from './stats.js';

const CONCURRENCY = 16;

const storeStock = (i: number): number => (i * 37) % 1000;
const storePrice = (i: number): number => round(10 + (i % 500) / 100);

/** Fills the store and the ERP with `skus` SKUs, one in `every` different; returns the ERP rows and the count. */
async function prepare(env: BenchEnvironment, skus: number, every: number, log: (line: string) => void): Promise<{ rows: ErpRow[]; expected: number }> {
  for (let start = 0; start < skus; start += 100_000) {
    const count = Math.min(100_000, skus - start);
    await env.sim.putItems(Array.from({ length: count }, (_, k) => ({ Code: sku(start + k + 1), Stock: storeStock(start + k + 1), Price: storePrice(start + k + 1) })));
  }
  const at = Date.now() - 3_600_000;
  const rows: ErpRow[] = Array.from({ length: skus }, (_, k) => {
    const i = k + 1;
    return { code: sku(i), stock: i % every === 0 ? storeStock(i) + 1 : storeStock(i), price: storePrice(i), at: at + k };
  });
  const expected = rows.filter((_, k) => (k + 1) % every === 0).length;
  await env.erp.clear();
  await env.erp.insert(rows);
  log(`reconcile: ${skus} SKUs in store and ERP, ${expected} different`);
  return { rows, expected };
}

/**
 * A reconcile of `skus` SKUs (a million by default), `differentShare` of them different: it must
 * complete, send exactly the differences, and stay under 1 GiB of RSS.
 */
export async function largeReconcileBench(
  env: BenchEnvironment,
  options: { skus: number; differentShare: number },
  log: (line: string) => void,
): Promise<Omit<BenchResult, 'run'>> {
  const { skus, differentShare } = options;
  const every = Math.round(1 / differentShare);
  const { rows, expected } = await prepare(env, skus, every, log);
  const config = env.daemonConfig({ concurrency: CONCURRENCY, sources: [benchSource(env.erp.url, { limit: 5000 })] });
  const daemon = await startDaemonProcess(config, 'all', join(env.logDir, 'daemon-reconcile-large.log'), env.daemonExecArgv);
  let run;
  let puts;
  try {
    const before = await env.sim.inventoryPuts();
    run = await daemon.reconcile(expected, 1_800_000);
    puts = (await env.sim.inventoryPuts()) - before;
  } finally {
    await daemon.stop();
  }
  // The same writes again (the store holds them now: nothing changes), after one read of each side.
  const writes = rows.filter((_, k) => (k + 1) % every === 0).map((r) => ({ Code: r.code, Stock: r.stock }));
  const raw = await rawReconcileWork(env, { table: 'changes', columns: 'code, stock, price, changed_at' }, writes, CONCURRENCY);
  log(
    `reconcile of ${skus} SKUs: ${puts} PUTs in ${Math.round(run.ms)} ms, peak RSS ${run.maxRssMiB} MiB (${run.rssBeforeMiB} MiB before it); ` +
      `raw least work ${raw.ms} ms (ERP read ${raw.erpMs}, store read ${raw.storeMs}, ${writes.length} PUTs ${raw.putMs}): ${ratio(run.ms, raw.ms)}×`,
  );
  return {
    name: 'reconcile-large',
    data: { skus, different: expected, run: { ...run, putsSent: puts }, rawReconcile: raw },
    summary: [
      {
        measure: `reconcile of ${skus} SKUs, ${differentShare * 100}% different: completes, PUTs sent`,
        value: `${puts} PUTs in ${round(run.ms / 1000, 1)} s`,
        baseline: `${expected} differences`,
        verdict: puts === expected ? 'equal' : `NOT equal (${puts - expected} extra)`,
      },
      wallRow(run.ms, raw, writes.length, CONCURRENCY),
      {
        measure: `peak RSS of the daemon process, reconcile of ${skus} SKUs`,
        value: `${run.maxRssMiB} MiB`,
        baseline: 'goal < 1 GB',
        verdict: run.maxRssMiB * 1.048576 < 1000 ? 'goal met' : 'goal missed',
      },
      {
        measure: `the reconcile's own share: peak RSS minus the process's RSS before it`,
        value: `${run.maxRssMiB - run.rssBeforeMiB} MiB`,
        baseline: `${run.rssBeforeMiB} MiB before the reconcile`,
        verdict: 'measure',
      },
    ],
  };
}

/** Runs the 1 % and the 0 % reconcile and the raw least work; returns the result to store. */
export async function reconcileBench(
  env: BenchEnvironment,
  options: { skus: number; differentShare: number },
  log: (line: string) => void,
): Promise<Omit<BenchResult, 'run'>> {
  const { skus, differentShare } = options;
  const every = Math.round(1 / differentShare);
  const { rows, expected } = await prepare(env, skus, every, log);

  const config = env.daemonConfig({ concurrency: CONCURRENCY, sources: [benchSource(env.erp.url, { limit: 5000 })] });
  const daemon = await startDaemonProcess(config, 'all', join(env.logDir, 'daemon-reconcile.log'), env.daemonExecArgv);
  let first;
  let second;
  let putsFirst;
  let putsSecond;
  try {
    const before = await env.sim.inventoryPuts();
    first = await daemon.reconcile(expected, 900_000);
    putsFirst = (await env.sim.inventoryPuts()) - before;
    const beforeSecond = await env.sim.inventoryPuts();
    second = await daemon.reconcile(0, 900_000);
    await daemon.drain(60_000);
    putsSecond = (await env.sim.inventoryPuts()) - beforeSecond;
  } finally {
    await daemon.stop();
  }

  // The raw least work: one GET of the whole inventory, one read of the ERP snapshot, the PUTs.
  const hash = await login(env.sim.url, STORE_USER, STORE_PASSWORD);
  const rawStarted = performance.now();
  const res = await request(`${env.sim.url}/Api/Inventory/Get?hash=${encodeURIComponent(hash)}`);
  const storeItems = ((await res.body.json()) as unknown[]).length;
  const client = new pg.Client({ connectionString: env.erp.url });
  await client.connect();
  const snapshot = await client.query(String(benchSource(env.erp.url).snapshot));
  await client.end();
  const puts = rows.filter((_, k) => (k + 1) % every === 0).map((r) => ({ InternalId: 0 as const, Code: r.code, Stock: r.stock + 1 }));
  await rawPutLoop(env.sim.url, hash, puts, CONCURRENCY);
  const rawMs = performance.now() - rawStarted;
  await waitFor(async () => (await env.sim.inventoryPuts()) > 0, { timeoutMs: 30_000, message: 'store counters' });

  // maxRSS only grows: after the second reconcile it is the peak of both.
  const peakMiB = Math.max(first.maxRssMiB, second.maxRssMiB);
  const firstReport = first.report as { differences: number; queued: number; erpRecords: number; storeItems: number };
  const secondReport = second.report as { differences: number; queued: number };
  const data = {
    skus,
    different: expected,
    first: { ...first, putsSent: putsFirst },
    second: { ...second, putsSent: putsSecond },
    raw: { ms: rawMs, storeItems, erpRows: snapshot.rowCount, puts: puts.length },
  };
  log(
    `reconcile 1%: ${firstReport.differences} differences, ${putsFirst} PUTs in ${Math.round(first.ms)} ms (raw least work ${Math.round(rawMs)} ms), ` +
      `peak RSS ${peakMiB} MiB (${first.rssBeforeMiB} MiB before the first reconcile); reconcile 0%: ${secondReport.differences} differences, ${putsSecond} PUTs in ${Math.round(second.ms)} ms`,
  );
  return {
    name: 'reconcile',
    data,
    summary: [
      {
        measure: `PUTs sent, ${skus} SKUs, ${differentShare * 100}% different`,
        value: String(putsFirst),
        baseline: `${expected} differences`,
        verdict: putsFirst === expected ? 'equal (goal met)' : `NOT equal (${putsFirst - expected} extra)`,
      },
      {
        measure: `wall time, ${skus} SKUs, ${differentShare * 100}% different`,
        value: `${round(first.ms / 1000, 1)} s (reading and diffing ${round(first.producedMs / 1000, 1)} s)`,
        baseline: `raw least work ${round(rawMs / 1000, 1)} s (1 GET of all items + 1 ERP SELECT + ${expected} PUTs)`,
        verdict: `${ratio(first.ms, rawMs)}×`,
      },
      {
        measure: 'peak RSS of the daemon process during the reconciles',
        value: `${peakMiB} MiB`,
        baseline: 'goal ≤ 200 MB',
        verdict: peakMiB * 1.048576 <= 200 ? 'goal met' : 'goal missed',
      },
      {
        measure: `the reconciles' own share: peak RSS minus the process's RSS before the first`,
        value: `${peakMiB - first.rssBeforeMiB} MiB`,
        baseline: `${first.rssBeforeMiB} MiB before the first reconcile`,
        verdict: 'measure',
      },
      {
        measure: `PUTs sent, ${skus} SKUs, 0% different`,
        value: String(putsSecond),
        baseline: '0',
        verdict: putsSecond === 0 ? 'nothing sent (goal met)' : 'SENT WRITES',
      },
      {
        measure: `wall time, ${skus} SKUs, 0% different`,
        value: `${round(second.ms / 1000, 1)} s`,
        baseline: `raw least work ${round(rawMs / 1000, 1)} s`,
        verdict: `${ratio(second.ms, rawMs)}×`,
      },
    ],
  };
}
