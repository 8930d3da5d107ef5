/**
 * Benchmark 5: stock-outs first. A backlog of 10,000 price changes is queued (one ERP import), and while
 * it drains at 20 ms store latency, SKUs drop to 0 stock in the ERP one every 200 ms. Measured: ERP
 * change (`changed_at`) → the store's acknowledgement of Stock 0, p50/p95/p99 (goal: p95 under 2 s).
 * Baseline, same run: the same stock-outs with nothing queued. The source is polled every second by
 * its cron schedule, as a deployment does, so both include a poll wait of 0–1 s.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { benchSource, type ErpRow, sku } from './bench-erp.js';
import { startDaemonProcess } from './daemon-process.js';
import type { BenchEnvironment } from './environment.js';
import type { BenchResult } from './results.js';
import { percentile, round } from './stats.js';

const STORE_LATENCY_MS = 20;
const STOCKOUT_EVERY_MS = 200;

/** Options: the backlog's size and how many stock-outs go in during it and in the idle baseline. */
export interface StockoutOptions {
  backlog: number;
  stockouts: number;
  idleStockouts: number;
}

/** Writes `count` stock-outs of the SKUs from `first`, one every 200 ms; returns code → change time. */
async function injectStockouts(env: BenchEnvironment, first: number, count: number): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  for (let i = 0; i < count; i += 1) {
    const row: ErpRow = { code: sku(first + i), stock: 0, price: 50, at: Date.now() };
    await env.erp.insert([row]);
    sent.set(row.code, row.at);
    await sleep(STOCKOUT_EVERY_MS);
  }
  return sent;
}

/** Runs the benchmark; returns the result to store. */
export async function stockoutBench(env: BenchEnvironment, options: StockoutOptions, log: (line: string) => void): Promise<Omit<BenchResult, 'run'>> {
  const { backlog, stockouts, idleStockouts } = options;
  const firstStockout = backlog + 1;
  const firstIdle = firstStockout + stockouts;
  const all = firstIdle + idleStockouts - 1;
  await env.sim.setFaults({ latencyMs: 0, jitterMs: 0 });
  await env.erp.clear();
  const source = benchSource(env.erp.url, { schedule: '*/1 * * * * *', limit: 1000 });
  const daemon = await startDaemonProcess(env.daemonConfig({ concurrency: 16, sources: [source] }), 'all', join(env.logDir, 'daemon-stockout.log'), env.daemonExecArgv);
  let sinceSeq = 0;
  let during: Map<string, number>;
  let idle: Map<string, number>;
  try {
    // Every SKU's current figure first, so that the backlog holds price changes only and 0 is a decrease.
    // The rows lie 10 ms apart in the past: the source's 1 s overlap window then re-reads ~100 of them.
    const start = Date.now() - all * 10 - 2000;
    await env.erp.insert(Array.from({ length: all }, (_, i) => ({ code: sku(i + 1), stock: 100, price: 50, at: start + i * 10 })));
    // Jobs done since the daemon started: one per SKU once the cron poll has read them all.
    await daemon.wait(all, 300_000);
    await daemon.drain(300_000);
    log(`stockout: ${all} SKUs known; backlog of ${backlog} price changes at ${STORE_LATENCY_MS} ms store latency`);
    await env.sim.setFaults({ latencyMs: STORE_LATENCY_MS, jitterMs: 0 });
    // Write sequence numbers count accepted writes: start a little before the current count, match by key.
    sinceSeq = Math.max(0, (await env.sim.inventoryPuts()) - 100);

    const importAt = Date.now();
    // One import: the rows carry the last second's timestamps, as a bulk update would.
    await env.erp.insert(Array.from({ length: backlog }, (_, i) => ({ code: sku(i + 1), stock: 100, price: 60, at: importAt - (backlog - i) * (1000 / backlog) })));
    // Let the next poll queue the backlog before the first stock-out.
    await sleep(1500);
    during = await injectStockouts(env, firstStockout, stockouts);
    await sleep(1500);
    await daemon.drain(600_000);
    idle = await injectStockouts(env, firstIdle, idleStockouts);
    await sleep(1500);
    await daemon.drain(60_000);
  } finally {
    await daemon.stop();
  }
  await env.sim.setFaults({ latencyMs: 0 });

  const writes = (await env.sim.writes(sinceSeq)).filter((w) => w.op === 'update');
  const backlogWrites = writes.filter((w) => w.fields.Price === 60);
  const lastBacklogAt = Math.max(...backlogWrites.map((w) => w.at));
  const lagsOf = (sent: Map<string, number>) =>
    writes
      .filter((w) => w.fields.Stock === 0 && sent.has(w.code))
      .map((w) => ({ lag: w.at - (sent.get(w.code) as number), at: w.at, changedAt: sent.get(w.code) as number }))
      .sort((a, b) => a.changedAt - b.changedAt);
  const duringLags = lagsOf(during);
  const idleLags = lagsOf(idle).map((l) => l.lag);
  const lags = duringLags.map((l) => l.lag);
  const beforeBacklogEnd = duringLags.filter((l) => l.at < lastBacklogAt).length;
  const p = (values: number[], q: number): number => round(percentile(values, q), 0);
  log(
    `stockout: ${lags.length}/${during.size} stock-outs written, ${beforeBacklogEnd} before the backlog finished (${backlogWrites.length} price writes); ` +
      `p50 ${p(lags, 50)} ms, p95 ${p(lags, 95)} ms, p99 ${p(lags, 99)} ms; idle p95 ${p(idleLags, 95)} ms`,
  );
  return {
    name: 'stockout',
    data: {
      backlog,
      storeLatencyMs: STORE_LATENCY_MS,
      stockoutEveryMs: STOCKOUT_EVERY_MS,
      pollEveryMs: 1000,
      stockouts: during.size,
      written: lags.length,
      writtenBeforeBacklogEnd: beforeBacklogEnd,
      backlogWrites: backlogWrites.length,
      backlogDrainMs: lastBacklogAt - (backlogWrites.length > 0 ? Math.min(...backlogWrites.map((w) => w.at)) : lastBacklogAt),
      lagMs: { p50: p(lags, 50), p95: p(lags, 95), p99: p(lags, 99), max: p(lags, 100) },
      // In the order the stock-outs were written to the ERP (the first ones meet the poll reading the backlog).
      lagsInOrderMs: lags,
      idleLagMs: { p50: p(idleLags, 50), p95: p(idleLags, 95), p99: p(idleLags, 99), max: p(idleLags, 100) },
    },
    summary: ([50, 95, 99] as const).map((q) => ({
      measure: `ERP stock-out → store ack, p${q}, while a ${backlog}-SKU price backlog drains, store latency ${STORE_LATENCY_MS} ms, source polled every 1 s`,
      value: `${p(lags, q)} ms`,
      baseline: `same stock-outs, nothing queued: p${q} ${p(idleLags, q)} ms`,
      verdict:
        q === 95
          ? `${p(lags, 95) < 2000 ? 'goal p95 < 2000 ms met' : `goal p95 < 2000 ms missed by ${p(lags, 95) - 2000} ms`}; ${beforeBacklogEnd} of ${during.size} written before the backlog finished`
          : `${lags.length} of ${during.size} written`,
    })),
  };
}
