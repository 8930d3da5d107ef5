/**
 * Benchmark 4: latency from an ERP change (its `changed_at`) to the store's acknowledgement (the
 * simulator's write time), at a steady load, with the source polled every second as a deployment
 * would. Beside it, the same percentiles of a bare PUT round trip at the same simulated latency.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { benchSource, type ErpRow, sku } from './bench-erp.js';
import { startDaemonProcess } from './daemon-process.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import { login } from './raw-loops.js';
import type { BenchResult } from './results.js';
import { percentile, round } from './stats.js';

const STORE_LATENCY_MS = 5;
const SKUS = 2000;

/** Drives a steady stream of ERP changes and measures each one's way to the store; returns the result to store. */
export async function latencyBench(
  env: BenchEnvironment,
  options: { perSecond: number; seconds: number },
  log: (line: string) => void,
): Promise<Omit<BenchResult, 'run'>> {
  await env.sim.setFaults({ latencyMs: STORE_LATENCY_MS, jitterMs: 0 });
  await env.erp.clear();
  const source = benchSource(env.erp.url, { schedule: '*/1 * * * * *' });
  const daemon = await startDaemonProcess(env.daemonConfig({ concurrency: 16, sources: [source] }), 'all', join(env.logDir, 'daemon-latency.log'), env.daemonExecArgv);
  // Write sequence numbers count accepted writes: start a little before the current count, match by key.
  const sinceSeq = Math.max(0, (await env.sim.inventoryPuts()) - 100);
  const sent = new Map<string, number>();
  let stock = 500_000;
  // The daemon's CPU in each third of the stream: the overlap window (60 s) fills as the stream goes on,
  // so every poll re-reads more rows; the thirds show what that costs per change.
  const thirds: number[] = [];
  const cpuMs = async (): Promise<number> => {
    const usage = await daemon.usage();
    return usage.cpuUserMs + usage.cpuSystemMs;
  };
  try {
    let mark = await cpuMs();
    let third = 1;
    const total = options.perSecond * options.seconds;
    const started = Date.now();
    let written = 0;
    // Rows go in every 50 ms, as many as the steady rate asks for, each stamped when it is written.
    while (written < total) {
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * options.perSecond));
      const rows: ErpRow[] = [];
      for (; written < due; written += 1) {
        stock += 1;
        rows.push({ code: sku((written % SKUS) + 1), stock, price: 50, at: Date.now() });
      }
      if (rows.length > 0) {
        await env.erp.insert(rows);
        for (const row of rows) sent.set(`${row.code}:${row.stock}`, row.at);
      }
      await sleep(50);
      if (written >= (total * third) / 3) {
        const now = await cpuMs();
        thirds.push(now - mark);
        mark = now;
        third += 1;
      }
    }
    await sleep(1500);
    await daemon.drain(120_000);
  } finally {
    await daemon.stop();
  }
  const writes = await env.sim.writes(sinceSeq);
  const lags: number[] = [];
  for (const write of writes) {
    const at = sent.get(`${write.code}:${String(write.fields.Stock)}`);
    if (at !== undefined) lags.push(write.at - at);
  }

  // Baseline: a bare PUT round trip at the same simulated latency, one at a time.
  const hash = await login(env.sim.url, STORE_USER, STORE_PASSWORD);
  const trips: number[] = [];
  for (let i = 0; i < 200; i += 1) {
    const t = performance.now();
    const res = await fetch(`${env.sim.url}/Api/Inventory?hash=${encodeURIComponent(hash)}&mode=default`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ InternalId: 0, Code: sku(i + 1), Stock: 3 }),
    });
    await res.text();
    trips.push(performance.now() - t);
  }
  await env.sim.setFaults({ latencyMs: 0 });
  const p = (values: number[], q: number): number => round(percentile(values, q), 0);
  const perChange = thirds.map((ms) => round(ms / (sent.size / 3), 3));
  log(`latency: ${lags.length}/${sent.size} changes matched; p50 ${p(lags, 50)} ms, p95 ${p(lags, 95)} ms, p99 ${p(lags, 99)} ms; daemon CPU per change by third of the stream ${perChange.join(' / ')} ms`);
  return {
    name: 'latency',
    data: {
      perSecond: options.perSecond,
      seconds: options.seconds,
      storeLatencyMs: STORE_LATENCY_MS,
      pollEveryMs: 1000,
      changes: sent.size,
      matched: lags.length,
      lagMs: { p50: p(lags, 50), p95: p(lags, 95), p99: p(lags, 99), max: p(lags, 100) },
      putRoundTripMs: { p50: p(trips, 50), p95: p(trips, 95), p99: p(trips, 99) },
      daemonCpuMsPerChangeByThird: perChange,
    },
    summary: [
      ...([50, 95, 99] as const).map((q) => ({
      measure: `ERP change → store ack, p${q}, ${options.perSecond} changes/s, source polled every 1 s, store latency ${STORE_LATENCY_MS} ms`,
      value: `${p(lags, q)} ms`,
      baseline: `bare PUT round trip p${q} ${p(trips, q)} ms + poll wait (0–1000 ms)`,
      verdict:
        `${lags.length} of ${sent.size} changes seen written` +
        (q === 95 ? `; goal ≤ 1250 ms (poll interval + 250 ms) ${p(lags, q) <= 1250 ? 'met' : `missed by ${p(lags, q) - 1250} ms`}` : ''),
      })),
      {
        measure: `daemon CPU per change in each third of the ${options.seconds} s stream (every poll re-reads the rows of the last 60 s: more as the stream goes on)`,
        value: perChange.map((ms) => `${ms} ms`).join(' / '),
        baseline: 'goal ≤ 0.5 ms per synced item',
        verdict: 'reported',
      },
    ],
  };
}

