/**
 * The daemon as users run it: `storesync run` (the real CLI process, every flow on, default settings
 * except `inventory.concurrency`) polling the ERP change log every second with the default `overlapMs`,
 * against the raw undici loop sending the same number of PUTs at the same concurrency, in the same run.
 *
 * Each cell inserts N changed rows (1 ms apart, ending now) into the change log while the daemon runs,
 * and measures the daemon from its first to its last PUT (the simulator's write log), its CPU time
 * (/proc) and the Redis commands (INFO commandstats) from the insert to the last PUT, per synced SKU.
 * Rows of earlier cells stay in the log, so polls re-read whatever is still inside the overlap window,
 * as in a deployment. Each daemon first syncs `warmUpItems` changes at 0 ms that no cell counts: a
 * daemon runs for days, so its cells are measured warm (the JIT has compiled the hot path), as the
 * bench process's raw loop is; the first daemon's warm-up sync is reported on its own row. A scale-out
 * row compares one and two `--role worker` processes beside one producer, warmed up the same way.
 *
 * The overlap row measures what a steady stream costs between its changes: at 200 changes/s the
 * default 60 s overlap holds 12,000 rows, and every 1 s poll re-reads them all. The daemon's CPU per
 * second with those rows in the log (delivered and synced, nothing new) is compared with the same
 * daemon's once the log is emptied.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { BaselineBuild } from './baseline-build.js';
import { summarizeBaseline } from './baseline-rows.js';
import { type ErpRow, sku } from './bench-erp.js';
import type { BaselineCell, CliCell, OverlapWindowRow } from './cli-cells.js';
import { type CliDaemon, startCliDaemon } from './cli-daemon.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import { type FloorCell, measureFloor, summarizeFloor } from './floor.js';
import { freshBodies, itemsFor, WARM_UP_FIRST_SKU } from './put-bodies.js';
import { login, type PutBody, rawPutLoop } from './raw-loops.js';
import type { BenchResult } from './results.js';
import { rate, ratio, round } from './stats.js';
import { measureSync, type SyncCost } from './sync-cost.js';
import { WriteLog } from './write-log.js';

/** Rows in the overlap window of a steady 200 changes/s with the default 60 s overlap. */
const WINDOW_ROWS = 12_000;
/** SKUs those rows change (four changes each). */
const WINDOW_SKUS = 3_000;
/** Seconds of each CPU reading of the overlap row. */
const WINDOW_READ_S = 10;

/** The grid and the size of its runs. */
export interface CliBenchOptions {
  latencies: readonly number[];
  concurrencies: readonly number[];
  /** Seconds a raw run should take at the estimated ceiling (sizes each run). */
  targetS: number;
  minItems: number;
  maxItems: number;
  /** Items of the scale-out row (0: no scale-out row). */
  scaleOutItems: number;
  /** Seconds the daemon is left idle before its idle RSS is read. */
  idleS: number;
  /** Changes each daemon syncs (0 ms) before its first cell (0: none). */
  warmUpItems: number;
  /** Also every cell with the floor process, right after the daemons of its concurrency (`--floor`, floor.ts). */
  floor?: boolean;
}

/** The first sync of a fresh daemon: the warm-up, measured like a cell. */
export interface FirstSync {
  concurrency: number;
  items: number;
  perS: number;
  daemonCpuMsPerItem: number;
}


/** Inserts the changes, waits for their PUTs, and reads what the daemon processes spent meanwhile. */
async function syncRun(env: BenchEnvironment, log: WriteLog, daemons: readonly CliDaemon[], list: readonly PutBody[]): Promise<SyncCost> {
  const now = Date.now();
  const rows: ErpRow[] = list.map((b, i) => ({ code: b.Code, stock: b.Stock as number, price: b.Price as number, at: now - list.length + i }));
  const run = await measureSync(env, log, daemons, () => env.erp.insert(rows), list.length);
  if (run.writes.length < list.length) throw new Error(`timed out waiting for ${list.length} store writes (${run.writes.length} came)`);
  return run;
}

/** A sync no figure counts, at 0 ms, of SKUs no measured run uses (`WARM_UP_FIRST_SKU`). */
async function warmUp(env: BenchEnvironment, log: WriteLog, daemons: readonly CliDaemon[], items: number) {
  await env.sim.setFaults({ latencyMs: 0, jitterMs: 0 });
  return syncRun(env, log, daemons, freshBodies(items, WARM_UP_FIRST_SKU));
}


/** Runs the grid and the scale-out row (and, with `baseline`, each cell again with its daemon); returns the result to store. */
export async function cliBench(
  env: BenchEnvironment,
  options: CliBenchOptions,
  logLine: (line: string) => void,
  baseline?: BaselineBuild,
): Promise<Omit<BenchResult, 'run'>> {
  const hash = await login(env.sim.url, STORE_USER, STORE_PASSWORD);
  const writes = new WriteLog(env);
  const cells: CliCell[] = [];
  const baselineCells: BaselineCell[] = [];
  const floorCells: FloorCell[] = [];
  let baselineIdle: { rssMiB: number; peakRssMiB: number; cpuMsPerS: number } | undefined;
  let baselineWindow: OverlapWindowRow | undefined;
  const start = (name: string, role: 'all' | 'producer' | 'worker', concurrency: number, prefix: string, root = env.root) =>
    startCliDaemon({
      root,
      logDir: env.logDir,
      name,
      storeUrl: env.sim.url,
      storeUser: STORE_USER,
      storePassword: STORE_PASSWORD,
      redisUrl: env.redis.url,
      prefix,
      erpUrl: env.erp.url,
      role,
      concurrency,
      execArgv: env.daemonExecArgv,
    });
  let idle: { rssMiB: number; peakRssMiB: number; cpuMsPerS: number } | undefined;
  let windowRow: OverlapWindowRow | undefined;
  let firstSync: FirstSync | undefined;
  for (const concurrency of options.concurrencies) {
    await env.erp.clear();
    const daemon = await start(`cli-c${concurrency}`, 'all', concurrency, `cli-c${concurrency}-${Date.now()}`);
    try {
      if (!idle) {
        const cpuBefore = daemon.cpuMs();
        await new Promise((resolve) => setTimeout(resolve, options.idleS * 1000));
        idle = { ...daemon.memory(), cpuMsPerS: round((daemon.cpuMs() - cpuBefore) / options.idleS, 1) };
        logLine(`storesync run idle ${options.idleS} s after start: RSS ${idle.rssMiB} MiB (peak ${idle.peakRssMiB} MiB), ${idle.cpuMsPerS} ms CPU per second`);
      }
      if (options.warmUpItems > 0) {
        const run = await warmUp(env, writes, [daemon], options.warmUpItems);
        const warm: FirstSync = { concurrency, items: options.warmUpItems, perS: run.perS, daemonCpuMsPerItem: round(run.cpuMsPerItem, 3) };
        firstSync ??= warm;
        logLine(`storesync run warm-up (not counted), latency 0 ms, concurrency ${concurrency}, ${warm.items} items: ${warm.perS}/s, ${warm.daemonCpuMsPerItem} ms daemon CPU per item`);
      }
      for (const latencyMs of options.latencies) {
        const cell = await measureCell(env, writes, hash, daemon, latencyMs, concurrency, itemsFor(latencyMs, concurrency, options));
        cells.push(cell);
        logLine(
          `storesync run, latency ${latencyMs} ms, concurrency ${concurrency}, ${cell.items} items: ${cell.daemonPerS}/s vs raw ${cell.rawPerS}/s ` +
            `(ratio ${cell.ratio}); per item ${cell.daemonCpuMsPerItem} ms daemon CPU, ${cell.redisCommandsPerItem} Redis commands ` +
            `(${JSON.stringify(cell.redisTopCommands)}), ${cell.redisCpuMsPerItem} ms Redis CPU; RSS ${cell.rssMiB} MiB`,
        );
      }
      windowRow ??= await overlapWindowRow(env, writes, daemon, logLine);
    } finally {
      await daemon.stop();
    }
    if (baseline) {
      // The same cells, right after, with the baseline build's daemon on a fresh log and prefix.
      await env.erp.clear();
      const base = await start(`base-c${concurrency}`, 'all', concurrency, `base-c${concurrency}-${Date.now()}`, baseline.root);
      try {
        if (!baselineIdle) {
          const cpuBefore = base.cpuMs();
          await sleep(options.idleS * 1000);
          baselineIdle = { ...base.memory(), cpuMsPerS: round((base.cpuMs() - cpuBefore) / options.idleS, 1) };
          logLine(`baseline ${baseline.ref} idle ${options.idleS} s after start: RSS ${baselineIdle.rssMiB} MiB (peak ${baselineIdle.peakRssMiB} MiB), ${baselineIdle.cpuMsPerS} ms CPU per second`);
        }
        if (options.warmUpItems > 0) await warmUp(env, writes, [base], options.warmUpItems);
        for (const latencyMs of options.latencies) {
          const current = cells.find((c) => c.latencyMs === latencyMs && c.concurrency === concurrency);
          if (!current) continue;
          const cell = await measureCell(env, writes, hash, base, latencyMs, concurrency, current.items);
          const ab: BaselineCell = {
            ...cell,
            cpuPerItemRatio: round(current.daemonCpuMsPerItem / cell.daemonCpuMsPerItem, 3),
            redisCommandsPerItemRatio: round(current.redisCommandsPerItem / cell.redisCommandsPerItem, 3),
          };
          baselineCells.push(ab);
          logLine(
            `A/B latency ${latencyMs} ms, concurrency ${concurrency}: current ${current.daemonCpuMsPerItem} ms CPU, ${current.redisCommandsPerItem} commands, ratio ${current.ratio}; ` +
              `baseline ${baseline.ref} ${cell.daemonCpuMsPerItem} ms CPU, ${cell.redisCommandsPerItem} commands, ratio ${cell.ratio} ` +
              `(raw ${cell.rawPerS}/s); current/baseline CPU ${ab.cpuPerItemRatio}, commands ${ab.redisCommandsPerItemRatio}`,
          );
        }
        // The overlap row once, as for the current daemon: the re-read cost of a steady stream.
        baselineWindow ??= await overlapWindowRow(env, writes, base, (line) => logLine(`baseline ${baseline.ref}: ${line}`));
      } finally {
        await base.stop();
      }
    }
    if (options.floor) {
      // The same cells with the least work on this stack, on a fresh log and prefix.
      await env.erp.clear();
      const measure = (floor: CliDaemon, latencyMs: number, items: number) => measureCell(env, writes, hash, floor, latencyMs, concurrency, items);
      const warm = (floor: CliDaemon) => (options.warmUpItems > 0 ? warmUp(env, writes, [floor], options.warmUpItems) : Promise.resolve());
      floorCells.push(...(await measureFloor(env, hash, concurrency, cells, baselineCells, { measure, warm }, logLine)));
    }
  }
  const scaleOut = options.scaleOutItems > 0 ? await scaleOutRow(env, writes, options.scaleOutItems, options.warmUpItems, start, logLine) : undefined;
  await env.sim.setFaults({ latencyMs: 0 });
  const ab = baseline
    ? { ref: baseline.ref, commit: baseline.commit, modules: baseline.modules, idle: baselineIdle, cells: baselineCells, overlapWindow: baselineWindow }
    : undefined;
  const summary = [...summarize(cells, idle, windowRow, scaleOut, firstSync), ...(ab ? summarizeBaseline(cells, ab, idle, windowRow) : []), ...summarizeFloor(cells, floorCells, baseline?.ref)];
  const floor = options.floor ? { floor: floorCells } : {};
  return { name: 'cli', summary, data: { options, cells, idle, firstSync, overlapWindow: windowRow, scaleOut, ...(ab ? { baseline: ab } : {}), ...floor } };
}

/** One cell: the raw loop, then the daemon syncing as many fresh changes, at `latencyMs`. */
async function measureCell(
  env: BenchEnvironment,
  writes: WriteLog,
  hash: string,
  daemon: CliDaemon,
  latencyMs: number,
  concurrency: number,
  items: number,
): Promise<CliCell> {
  await env.sim.setFaults({ latencyMs, jitterMs: 0 });
  const raw = await rawPutLoop(env.sim.url, hash, freshBodies(items), concurrency);
  const rawPerS = rate(items, raw.ms);
  const run = await syncRun(env, writes, [daemon], freshBodies(items));
  return {
    latencyMs,
    concurrency,
    items,
    rawPerS,
    daemonPerS: run.perS,
    ratio: ratio(run.perS, rawPerS),
    daemonCpuMsPerItem: round(run.cpuMsPerItem, 3),
    redisCommandsPerItem: round(run.redisPerItem, 1),
    redisCpuMsPerItem: round(run.redisCpuMsPerItem, 3),
    redisTopCommands: run.top,
    rssMiB: daemon.memory().rssMiB,
  };
}


async function cpuPerSecond(daemon: CliDaemon, seconds: number): Promise<number> {
  const before = daemon.cpuMs();
  await sleep(seconds * 1000);
  return round((daemon.cpuMs() - before) / seconds, 1);
}

async function overlapWindowRow(env: BenchEnvironment, writes: WriteLog, daemon: CliDaemon, logLine: (line: string) => void): Promise<OverlapWindowRow> {
  await env.sim.setFaults({ latencyMs: 0, jitterMs: 0 });
  await env.erp.clear();
  await sleep(2000);
  const emptyCpuMsPerS = await cpuPerSecond(daemon, WINDOW_READ_S);
  // 2.5 ms apart over the last 30 s: still inside the 60 s window when the CPU is read.
  const now = Date.now();
  const rows: ErpRow[] = Array.from({ length: WINDOW_ROWS }, (_, r) => ({
    code: sku((r % WINDOW_SKUS) + 1),
    stock: (now + r) % 999_999,
    price: round(1 + (r % 99_999) / 100),
    at: now - 30_000 + Math.floor((r * 30_000) / WINDOW_ROWS),
  }));
  await writes.mark();
  await env.erp.insert(rows);
  // Delivered and synced: every SKU written, then no write for a second and a half.
  await writes.span(WINDOW_SKUS, 600_000);
  await writes.quiet(1500, 120_000);
  const cpuMsPerS = await cpuPerSecond(daemon, WINDOW_READ_S);
  const usPerRowRead = round(((cpuMsPerS - emptyCpuMsPerS) * 1000) / WINDOW_ROWS, 2);
  logLine(
    `storesync run with ${WINDOW_ROWS} rows in the overlap window, nothing new: ${cpuMsPerS} ms CPU per second, ` +
      `${emptyCpuMsPerS} with the log emptied: ${usPerRowRead} µs per row re-read`,
  );
  await env.erp.clear();
  return { rows: WINDOW_ROWS, cpuMsPerS, emptyCpuMsPerS, usPerRowRead };
}

type Starter = (name: string, role: 'all' | 'producer' | 'worker', concurrency: number, prefix: string) => Promise<CliDaemon>;

/** One producer and one, then two, `--role worker` processes (concurrency 16 each) at 20 ms. */
async function scaleOutRow(env: BenchEnvironment, writes: WriteLog, items: number, warmUpItems: number, start: Starter, logLine: (line: string) => void) {
  const perS: number[] = [];
  for (const workers of [1, 2]) {
    await env.erp.clear();
    const prefix = `cli-scale${workers}-${Date.now()}`;
    const daemons: CliDaemon[] = [];
    try {
      daemons.push(await start(`scale${workers}-producer`, 'producer', 16, prefix));
      for (let i = 1; i <= workers; i += 1) daemons.push(await start(`scale${workers}-worker${i}`, 'worker', 16, prefix));
      // Warm, as the cells: every worker process syncs about `warmUpItems` changes first, not counted.
      if (warmUpItems > 0) await warmUp(env, writes, daemons, warmUpItems * workers);
      await env.sim.setFaults({ latencyMs: 20, jitterMs: 0 });
      const run = await syncRun(env, writes, daemons, freshBodies(items));
      perS.push(run.perS);
      logLine(`scale-out: producer + ${workers} worker process(es), ${items} items at 20 ms: ${run.perS}/s, ${round(run.cpuMsPerItem, 3)} ms CPU per item`);
    } finally {
      await Promise.all(daemons.map((d) => d.stop()));
    }
  }
  return { items, oneWorkerPerS: perS[0] ?? Number.NaN, twoWorkersPerS: perS[1] ?? Number.NaN, ratio: ratio(perS[1] ?? 0, perS[0] ?? 0) };
}

function summarize(
  cells: readonly CliCell[],
  idle: { rssMiB: number; peakRssMiB: number; cpuMsPerS: number } | undefined,
  windowRow: OverlapWindowRow | undefined,
  scaleOut: { items: number; oneWorkerPerS: number; twoWorkersPerS: number; ratio: number } | undefined,
  firstSync: FirstSync | undefined,
): BenchResult['summary'] {
  const goal = (c: CliCell): string => {
    if (c.latencyMs === 20) return c.ratio >= 0.95 ? 'goal ≥ 0.95 met' : `goal ≥ 0.95 missed by ${round(0.95 - c.ratio, 3)}`;
    // Issue 27: 5 ms ≥ 0.9 and 0 ms ≥ 0.6 at concurrency 16; the other cells keep issue 11's 0.5 (5 ms) and its aim (0 ms).
    const floor = c.concurrency === 16 ? (c.latencyMs === 5 ? 0.9 : 0.6) : 0.5;
    if (c.latencyMs === 5 || c.concurrency === 16) return c.ratio >= floor ? `goal ≥ ${floor} met` : `goal ≥ ${floor} missed by ${round(floor - c.ratio, 3)}`;
    return 'reported (aim ≥ 0.5)';
  };
  const summary: BenchResult['summary'] = cells.map((c) => ({
    measure: `storesync run updates/s, latency ${c.latencyMs} ms, concurrency ${c.concurrency} (${c.items} items)`,
    value: `${c.daemonPerS}/s`,
    baseline: `raw undici loop ${c.rawPerS}/s`,
    verdict: `${c.ratio} (${goal(c)})`,
  }));
  for (const c of cells) {
    const cpu = c.daemonCpuMsPerItem <= 0.5 ? 'met' : `missed (${round(c.daemonCpuMsPerItem / 0.5, 1)}×)`;
    const redis = c.redisCommandsPerItem <= 8 ? 'met' : `missed (${round(c.redisCommandsPerItem / 8, 1)}×)`;
    summary.push({
      measure: `cost per synced item, latency ${c.latencyMs} ms, concurrency ${c.concurrency}`,
      value: `${c.daemonCpuMsPerItem} ms daemon CPU, ${c.redisCommandsPerItem} Redis commands, ${c.redisCpuMsPerItem} ms Redis CPU; ratio to the raw loop ${c.ratio}`,
      baseline: 'goal ≤ 0.5 ms CPU (issue 11; issue 27: ≤ 0.4 × ce815e1, the A/B rows), ≤ 8 commands (issue 27)',
      verdict: `CPU ${cpu}, commands ${redis}`,
    });
  }
  if (firstSync) {
    summary.push({
      measure: `first sync of a fresh storesync run (the warm-up no cell counts), latency 0 ms, concurrency ${firstSync.concurrency} (${firstSync.items} items)`,
      value: `${firstSync.perS}/s, ${firstSync.daemonCpuMsPerItem} ms daemon CPU per item`,
      baseline: 'the cells above: the same daemon warm',
      verdict: 'reported',
    });
  }
  if (idle) {
    summary.push({ measure: 'idle storesync run RSS', value: `${idle.rssMiB} MiB`, baseline: 'goal ≤ 100 MB', verdict: idle.rssMiB * 1.048576 <= 100 ? 'met' : 'missed' });
    summary.push({ measure: 'idle storesync run CPU (every flow polling on its schedule)', value: `${idle.cpuMsPerS} ms per second`, baseline: '—', verdict: 'reported' });
  }
  if (windowRow) {
    // Each change of a steady 200/s stream is re-read by the sixty polls of its minute in the window.
    const perChange = round((windowRow.cpuMsPerS - windowRow.emptyCpuMsPerS) / 200, 3);
    summary.push({
      measure: `storesync run CPU with ${windowRow.rows} rows in the overlap window (200 changes/s × the default 60 s), nothing new, polled every second`,
      value: `${windowRow.cpuMsPerS} ms per second: ${windowRow.usPerRowRead} µs per row re-read, ${perChange} ms per change of a steady 200/s stream`,
      baseline: `the same daemon with the log emptied ${windowRow.emptyCpuMsPerS} ms per second`,
      verdict: 'reported',
    });
  }
  const peak = Math.max(0, ...cells.map((c) => c.rssMiB));
  if (cells.length > 0) summary.push({ measure: 'storesync run RSS after its largest run', value: `${peak} MiB`, baseline: 'goal ≤ 200 MB while syncing', verdict: peak * 1.048576 <= 200 ? 'met' : 'missed' });
  if (scaleOut) {
    summary.push({
      measure: `scale-out: producer + 2 worker processes vs producer + 1, ${scaleOut.items} items, 20 ms, concurrency 16 each`,
      value: `${scaleOut.twoWorkersPerS}/s`,
      baseline: `one worker process ${scaleOut.oneWorkerPerS}/s`,
      verdict: `${scaleOut.ratio}× (${scaleOut.ratio >= 1.7 ? 'goal ≥ 1.7 met' : `goal ≥ 1.7 missed by ${round(1.7 - scaleOut.ratio, 2)}`})`,
    });
  }
  return summary;
}
