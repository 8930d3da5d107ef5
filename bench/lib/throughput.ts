/**
 * Benchmark 1 (throughput against the ceiling) and 5 (per-job cost): inventory updates per second
 * through the daemon path (ERP table → SQL source → Redis → worker → store) against a raw undici loop
 * sending the same PUTs with the same concurrency, and a hand-written sequential loop, at several store
 * latencies and concurrencies. The daemon's CPU time and Redis commands per item come from the same runs.
 */
import { join } from 'node:path';

import { benchSource, type ErpRow } from './bench-erp.js';
import { startDaemonProcess } from './daemon-process.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import { freshBodies, itemsFor } from './put-bodies.js';
import { login, rawPutLoop, sequentialPutLoop } from './raw-loops.js';
import { commandDelta } from './redis-server.js';
import type { BenchResult } from './results.js';
import { rate, ratio, round } from './stats.js';

/** The grid and the size of its runs. */
export interface ThroughputOptions {
  latencies: readonly number[];
  concurrencies: readonly number[];
  /** Seconds a raw loop should take at the estimated ceiling (sizes each run). */
  targetS: number;
  maxItems: number;
  reps: number;
}

/** One latency × concurrency cell. */
export interface ThroughputCell {
  latencyMs: number;
  concurrency: number;
  items: number;
  rawPerS: number;
  daemonPerS: number;
  ratio: number;
  sequentialPerS: number;
  daemonVsSequential: number;
  daemonCpuMsPerItem: number;
  rawCpuMsPerItem: number;
  redisCommandsPerItem: number;
  /** CPU time of the redis-server per item, ms (commands, Lua scripts, the event loop). */
  redisCpuMsPerItem: number;
  redisTopCommands: Record<string, number>;
  outcomes: Record<string, number>;
  /** Time the poll itself took (reading the ERP, merging, queueing) within the daemon run. */
  producerMs: number;
}


async function rawRun(env: BenchEnvironment, hash: string, items: number, concurrency: number) {
  const list = freshBodies(items);
  const cpu = process.cpuUsage();
  const result = await rawPutLoop(env.sim.url, hash, list, concurrency);
  const used = process.cpuUsage(cpu);
  if (result.failed > 0) throw new Error(`raw loop: ${result.failed} PUTs failed`);
  return { perS: rate(items, result.ms), cpuMsPerItem: (used.user + used.system) / 1000 / items };
}

async function daemonRun(env: BenchEnvironment, items: number, concurrency: number, log: string) {
  const list = freshBodies(items);
  const start = Date.now() - items * 10;
  // Rows 10 ms apart: a backlog of recent ERP changes, as a poll after a busy minute finds it.
  const rows: ErpRow[] = list.map((b, i) => ({ code: b.Code, stock: b.Stock as number, price: b.Price as number, at: start + i * 10 }));
  await env.erp.clear();
  await env.erp.insert(rows);
  const config = env.daemonConfig({ concurrency, sources: [benchSource(env.erp.url)] });
  const daemon = await startDaemonProcess(config, 'all', log, env.daemonExecArgv);
  try {
    const before = await env.redis.commandCalls();
    const cpuBefore = await env.redis.cpuMs();
    const run = await daemon.poll('bench', items, 600_000);
    const redisCpuMs = (await env.redis.cpuMs()) - cpuBefore;
    const delta = commandDelta(before, await env.redis.commandCalls());
    const top = Object.fromEntries(Object.entries(delta.byCommand).sort((a, b) => b[1] - a[1]).slice(0, 8));
    return {
      perS: rate(items, run.ms),
      cpuMsPerItem: run.cpuMs / items,
      redisPerItem: delta.total / items,
      redisCpuMsPerItem: redisCpuMs / items,
      top,
      outcomes: run.outcomes,
      producerMs: run.producedMs,
    };
  } finally {
    await daemon.stop();
  }
}

/** Runs the grid; returns the result to store. */
export async function throughputBench(env: BenchEnvironment, options: ThroughputOptions, log: (line: string) => void): Promise<Omit<BenchResult, 'run'>> {
  const hash = await login(env.sim.url, STORE_USER, STORE_PASSWORD);
  const cells: ThroughputCell[] = [];
  for (const latencyMs of options.latencies) {
    await env.sim.setFaults({ latencyMs, jitterMs: 0 });
    const seqItems = itemsFor(latencyMs, 1, { ...options, minItems: 100 });
    const seq = await sequentialPutLoop(env.sim.url, hash, freshBodies(seqItems));
    const sequentialPerS = rate(seqItems, seq.ms);
    for (const concurrency of options.concurrencies) {
      const items = itemsFor(latencyMs, concurrency, { ...options, minItems: 100 });
      let raw = { perS: 0, cpuMsPerItem: 0 };
      let best: Awaited<ReturnType<typeof daemonRun>> | undefined;
      for (let rep = 0; rep < options.reps; rep += 1) {
        const r = await rawRun(env, hash, items, concurrency);
        if (r.perS > raw.perS) raw = r;
        const d = await daemonRun(env, items, concurrency, join(env.logDir, `daemon-l${latencyMs}-c${concurrency}-${rep}.log`));
        if (!best || d.perS > best.perS) best = d;
      }
      if (!best) throw new Error('no daemon run');
      const cell: ThroughputCell = {
        latencyMs,
        concurrency,
        items,
        rawPerS: raw.perS,
        daemonPerS: best.perS,
        ratio: ratio(best.perS, raw.perS),
        sequentialPerS,
        daemonVsSequential: ratio(best.perS, sequentialPerS),
        daemonCpuMsPerItem: round(best.cpuMsPerItem, 3),
        rawCpuMsPerItem: round(raw.cpuMsPerItem, 3),
        redisCommandsPerItem: round(best.redisPerItem, 1),
        redisCpuMsPerItem: round(best.redisCpuMsPerItem, 3),
        redisTopCommands: best.top,
        outcomes: best.outcomes,
        producerMs: Math.round(best.producerMs),
      };
      cells.push(cell);
      log(
        `throughput latency ${latencyMs} ms, concurrency ${concurrency}, ${items} items: daemon ${cell.daemonPerS}/s, raw ${cell.rawPerS}/s ` +
          `(ratio ${cell.ratio}), sequential ${sequentialPerS}/s; per item ${cell.daemonCpuMsPerItem} ms daemon CPU, ` +
          `${cell.redisCpuMsPerItem} ms Redis CPU, ${cell.redisCommandsPerItem} Redis commands`,
      );
    }
  }
  await env.sim.setFaults({ latencyMs: 0 });
  const goal = (c: ThroughputCell): string => {
    if (c.latencyMs === 20) return c.ratio >= 0.95 ? 'goal ≥ 0.95 met' : `goal ≥ 0.95 missed by ${round(0.95 - c.ratio, 3)}`;
    if (c.latencyMs === 0) return c.ratio >= 0.5 ? 'goal ≥ 0.5 met' : `goal ≥ 0.5 missed by ${round(0.5 - c.ratio, 3)}`;
    return 'no goal';
  };
  const summary = cells.flatMap((c) => [
    {
      measure: `updates/s, latency ${c.latencyMs} ms, concurrency ${c.concurrency} (${c.items} items)`,
      value: `daemon ${c.daemonPerS}/s`,
      baseline: `raw undici loop ${c.rawPerS}/s`,
      verdict: `${c.ratio} (${goal(c)})`,
    },
  ]);
  for (const latencyMs of options.latencies) {
    const row = cells.filter((c) => c.latencyMs === latencyMs).sort((a, b) => b.concurrency - a.concurrency)[0];
    if (!row) continue;
    summary.push({
      measure: `vs hand-written sequential loop, latency ${latencyMs} ms`,
      value: `daemon ${row.daemonPerS}/s (concurrency ${row.concurrency})`,
      baseline: `sequential fetch loop ${row.sequentialPerS}/s`,
      verdict: `${row.daemonVsSequential}×`,
    });
  }
  for (const c of cells.filter((x) => x.latencyMs === options.latencies[0] || x.latencyMs === options.latencies.at(-1))) {
    summary.push({
      measure: `cost per item, latency ${c.latencyMs} ms, concurrency ${c.concurrency}`,
      value: `${c.daemonCpuMsPerItem} ms CPU (daemon) + ${c.redisCpuMsPerItem} ms CPU (redis-server), ${c.redisCommandsPerItem} Redis commands`,
      baseline: `${c.rawCpuMsPerItem} ms CPU (raw loop), 0 Redis commands`,
      verdict: `${ratio(c.daemonCpuMsPerItem, c.rawCpuMsPerItem)}× CPU`,
    });
  }
  return { name: 'throughput', summary, data: { options, cells } };
}
