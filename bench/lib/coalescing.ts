/**
 * Benchmark 3: coalescing and change detection. Ten versions of each of N SKUs land in the ERP
 * (interleaved in time, as a busy ERP writes them) and are read by one poll:
 * - backlog: the poll runs while no worker is up (workers down, or busy): exactly N PUTs expected;
 * - live: workers run during the poll, so some SKUs are sent before their later versions are read
 *   (shown for information: between N and 10 N);
 * - re-run: the same ERP rows read again from the start (a new source with the same query): 0 PUTs.
 */
import { join } from 'node:path';

import { benchSource, type ErpRow, sku } from './bench-erp.js';
import { startDaemonProcess } from './daemon-process.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import { login, rawPutLoop } from './raw-loops.js';
import type { BenchResult } from './results.js';
import { ratio, round } from './stats.js';

const CONCURRENCY = 16;

function changes(skus: number, updatesPerSku: number, base: number): ErpRow[] {
  const start = Date.now() - skus * updatesPerSku - 60_000;
  const rows: ErpRow[] = [];
  for (let k = 1; k <= updatesPerSku; k += 1) {
    for (let i = 1; i <= skus; i += 1) rows.push({ code: sku(i), stock: base + k, price: round(20 + (base + k) / 100), at: start + rows.length });
  }
  return rows;
}

/** Runs the backlog, re-run and live cases; returns the result to store. */
export async function coalescingBench(
  env: BenchEnvironment,
  options: { skus: number; updatesPerSku: number },
  log: (line: string) => void,
): Promise<Omit<BenchResult, 'run'>> {
  const { skus, updatesPerSku } = options;
  const total = skus * updatesPerSku;
  // A limit of 5,000 rows keeps the whole backlog within one poll (50 rounds).
  const source = benchSource(env.erp.url, { limit: 5000 });
  const rerun = benchSource(env.erp.url, { limit: 5000, name: 'bench-rerun' });

  // Backlog: the producer alone reads everything, then a worker sends it.
  await env.erp.clear();
  await env.erp.insert(changes(skus, updatesPerSku, 100));
  const config = env.daemonConfig({ concurrency: CONCURRENCY, sources: [source, rerun] });
  const producer = await startDaemonProcess(config, 'producer', join(env.logDir, 'daemon-coalescing-producer.log'), env.daemonExecArgv);
  const before = await env.sim.inventoryPuts();
  let pollMs: number;
  try {
    pollMs = (await producer.poll('bench', 0, 600_000)).producedMs;
  } finally {
    await producer.stop();
  }
  const worker = await startDaemonProcess(config, 'worker', join(env.logDir, 'daemon-coalescing-worker.log'), env.daemonExecArgv);
  let backlogPuts: number;
  let rerunPuts: number;
  let rerunOutcomes: Record<string, number>;
  let sendMs: number;
  try {
    const started = performance.now();
    await worker.wait(skus, 600_000);
    await worker.drain(60_000);
    sendMs = performance.now() - started;
    backlogPuts = (await env.sim.inventoryPuts()) - before;
  } finally {
    await worker.stop();
  }
  // Re-run: the same rows again, through a source that has never been polled.
  const again = await startDaemonProcess(config, 'all', join(env.logDir, 'daemon-coalescing-rerun.log'), env.daemonExecArgv);
  try {
    const beforeRerun = await env.sim.inventoryPuts();
    await again.poll('bench-rerun', 0, 600_000);
    rerunOutcomes = (await again.drain(120_000)).outcomes;
    rerunPuts = (await env.sim.inventoryPuts()) - beforeRerun;
  } finally {
    await again.stop();
  }
  log(`coalescing backlog: ${total} changes → ${backlogPuts} PUTs (poll ${Math.round(pollMs)} ms, send ${Math.round(sendMs)} ms); re-run → ${rerunPuts} PUTs`);

  // Live: new versions, workers running while the poll reads them.
  await env.erp.clear();
  await env.erp.insert(changes(skus, updatesPerSku, 200));
  const live = await startDaemonProcess(env.daemonConfig({ concurrency: CONCURRENCY, sources: [source] }), 'all', join(env.logDir, 'daemon-coalescing-live.log'), env.daemonExecArgv);
  let livePuts: number;
  try {
    const beforeLive = await env.sim.inventoryPuts();
    await live.poll('bench', 0, 600_000);
    await live.drain(300_000);
    livePuts = (await env.sim.inventoryPuts()) - beforeLive;
  } finally {
    await live.stop();
  }
  log(`coalescing live: ${total} changes → ${livePuts} PUTs`);

  // Baseline for the send time: the same number of PUTs from a raw loop.
  const hash = await login(env.sim.url, STORE_USER, STORE_PASSWORD);
  const raw = await rawPutLoop(env.sim.url, hash, Array.from({ length: skus }, (_, i) => ({ InternalId: 0 as const, Code: sku(i + 1), Stock: 7 })), CONCURRENCY);

  return {
    name: 'coalescing',
    data: { skus, updatesPerSku, backlogPuts, pollMs, sendMs, rerunPuts, rerunOutcomes, livePuts, rawSendMs: raw.ms },
    summary: [
      {
        measure: `PUTs for ${updatesPerSku} updates × ${skus} SKUs read by one poll (backlog)`,
        value: String(backlogPuts),
        baseline: `${total} without coalescing; ${skus} expected`,
        verdict: backlogPuts === skus ? `equal (goal met), ${ratio(backlogPuts, total)} of naive` : `NOT ${skus}`,
      },
      {
        measure: `time to send the ${skus} coalesced PUTs`,
        value: `${round(sendMs / 1000, 2)} s (+ poll ${round(pollMs / 1000, 2)} s)`,
        baseline: `raw loop, same PUTs: ${round(raw.ms / 1000, 2)} s`,
        verdict: `${ratio(raw.ms, sendMs)} of raw speed`,
      },
      {
        measure: 'PUTs when the same ERP data is read again',
        value: String(rerunPuts),
        baseline: '0 expected',
        verdict: rerunPuts === 0 ? 'nothing sent (goal met)' : 'SENT WRITES',
      },
      {
        measure: `PUTs for ${updatesPerSku} × ${skus} changes with workers running during the poll (information)`,
        value: String(livePuts),
        baseline: `${skus} to ${total}`,
        verdict: `${ratio(livePuts, total)} of naive`,
      },
    ],
  };
}
