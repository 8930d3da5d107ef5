/**
 * The daemon's memory while it syncs a large backlog: `storesync run` as users run it (every flow on,
 * default settings, concurrency 16) idles first, then N changed SKUs land in the ERP change log at once
 * and the daemon's resident memory (VmRSS from /proc) is sampled every 250 ms until the store has
 * accepted N PUTs. The store answers at once (latency 0 ms), so the run is as short as the daemon can
 * make it and the backlog waits in the daemon, Redis and the change log rather than at the store.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { waitFor } from '../../src/wait-for.js';
import { sku } from './bench-erp.js';
import { startCliDaemon } from './cli-daemon.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import { freshBodies } from './put-bodies.js';
import type { BenchResult } from './results.js';
import { rate, round } from './stats.js';

/** The size of the run. */
export interface CliMemoryOptions {
  /** Changed SKUs inserted at once. */
  skus: number;
  /** Seconds the daemon is left idle before its idle RSS is read. */
  idleS: number;
  /** Time allowed for the store to receive every PUT, seconds. */
  timeoutS: number;
}

const SAMPLE_MS = 250;
const CONCURRENCY = 16;
/** The goal while syncing, MB (10^6 bytes). */
const GOAL_MB = 200;

/** Runs the memory benchmark; returns the result to store. */
export async function cliMemoryBench(env: BenchEnvironment, options: CliMemoryOptions, logLine: (line: string) => void): Promise<Omit<BenchResult, 'run'>> {
  await env.erp.clear();
  await env.sim.setFaults({ latencyMs: 0, jitterMs: 0 });
  // Every SKU must exist in the store: an unknown one would fail its job instead of being written.
  await env.sim.putItems(Array.from({ length: options.skus }, (_, i) => ({ Code: sku(i + 1), Stock: 0, Price: 1 })));
  const daemon = await startCliDaemon({
    root: env.root,
    logDir: env.logDir,
    name: 'cli-memory',
    storeUrl: env.sim.url,
    storeUser: STORE_USER,
    storePassword: STORE_PASSWORD,
    redisUrl: env.redis.url,
    prefix: `cli-memory-${Date.now()}`,
    erpUrl: env.erp.url,
    role: 'all',
    concurrency: CONCURRENCY,
    execArgv: env.daemonExecArgv,
  });
  try {
    await sleep(options.idleS * 1000);
    const idle = daemon.memory();
    logLine(`storesync run idle ${options.idleS} s after start: RSS ${idle.rssMiB} MiB (peak since start ${idle.peakRssMiB} MiB)`);

    const bodies = freshBodies(options.skus);
    const now = Date.now();
    const putsBefore = await env.sim.inventoryPuts();
    let peakMiB = idle.rssMiB;
    const samples: number[] = [];
    const sampler = setInterval(() => {
      const { rssMiB } = daemon.memory();
      samples.push(rssMiB);
      peakMiB = Math.max(peakMiB, rssMiB);
    }, SAMPLE_MS);
    const started = Date.now();
    let puts = 0;
    try {
      await env.erp.insert(bodies.map((b, i) => ({ code: b.Code, stock: b.Stock as number, price: b.Price as number, at: now - bodies.length + i })));
      await waitFor(
        async () => {
          if (!daemon.child.alive()) throw new Error(`storesync run exited; see ${daemon.child.logFile}`);
          puts = (await env.sim.inventoryPuts()) - putsBefore;
          return puts >= options.skus;
        },
        { timeoutMs: options.timeoutS * 1000, intervalMs: SAMPLE_MS, message: `${options.skus} store PUTs` },
      );
    } finally {
      clearInterval(sampler);
    }
    const wallMs = Date.now() - started;
    const after = daemon.memory();
    const run = {
      skus: options.skus,
      concurrency: CONCURRENCY,
      idleRssMiB: idle.rssMiB,
      peakRssMiB: peakMiB,
      // VmHWM also covers the start-up, which allocates more than idling does.
      hwmRssMiB: after.peakRssMiB,
      afterRssMiB: after.rssMiB,
      wallS: round(wallMs / 1000, 1),
      perS: rate(options.skus, wallMs),
      samples,
    };
    logLine(
      `storesync run syncing ${options.skus} changed SKUs (latency 0 ms, concurrency ${CONCURRENCY}): peak RSS ${run.peakRssMiB} MiB ` +
        `(idle before ${run.idleRssMiB} MiB, after ${run.afterRssMiB} MiB, VmHWM ${run.hwmRssMiB} MiB), ${run.wallS} s, ${run.perS}/s`,
    );
    return { name: 'memory', summary: summarize(run), data: { options, run } };
  } finally {
    await daemon.stop();
  }
}

function summarize(run: { skus: number; idleRssMiB: number; peakRssMiB: number; wallS: number; perS: number }): BenchResult['summary'] {
  const peakMB = round(run.peakRssMiB * 1.048576, 0);
  return [
    {
      measure: `storesync run peak RSS while syncing ${run.skus} changed SKUs (latency 0 ms, concurrency ${CONCURRENCY}, sampled every ${SAMPLE_MS} ms)`,
      value: `${run.peakRssMiB} MiB (${peakMB} MB)`,
      baseline: `idle RSS of the same process ${run.idleRssMiB} MiB`,
      verdict: peakMB <= GOAL_MB ? `goal ≤ ${GOAL_MB} MB met` : `goal ≤ ${GOAL_MB} MB missed by ${round(peakMB - GOAL_MB, 0)} MB`,
    },
    {
      measure: `wall time of that sync, insert to the last PUT`,
      value: `${run.wallS} s (${run.perS}/s)`,
      baseline: '—',
      verdict: 'reported',
    },
  ];
}
