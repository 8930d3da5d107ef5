/**
 * Starts the floor process (`floor-child.ts`: the least work per item on storesync's stack) against a
 * benchmark's simulator, Redis and change log, measured through /proc like a `storesync run`.
 */
import { join } from 'node:path';

import { lineWaiter, startChild } from './child.js';
import type { BaselineCell, CliCell } from './cli-cells.js';
import { type CliDaemon, processHandle } from './cli-daemon.js';
import type { BenchEnvironment } from './environment.js';
import type { BenchResult } from './results.js';
import { round } from './stats.js';

/** A cell measured with the floor process, beside the daemon's (and the baseline's). */
export interface FloorCell extends CliCell {
  /** The current daemon's CPU per item ÷ the floor's. */
  currentOverFloor: number;
  /** The floor's CPU per item ÷ the baseline's: the lowest current/baseline quotient this stack allows. */
  floorOverBaseline?: number;
}

/** Starts the floor with `concurrency` jobs (and PUTs) at once; resolves once its worker runs. */
export async function startFloor(env: BenchEnvironment, hash: string, concurrency: number, prefix: string, execArgv: readonly string[] = []): Promise<CliDaemon> {
  const lines = lineWaiter();
  const child = startChild(process.execPath, [...execArgv, join(env.root, 'dist', 'bench', 'lib', 'floor-child.js')], join(env.logDir, `${prefix}.log`), {
    env: {
      PATH: process.env.PATH ?? '',
      FLOOR_STORE_URL: env.sim.url,
      FLOOR_HASH: hash,
      FLOOR_REDIS_URL: env.redis.url,
      FLOOR_PREFIX: prefix,
      FLOOR_PG_URL: env.erp.url,
      FLOOR_CONCURRENCY: String(concurrency),
    },
    onLine: lines.onLine,
  });
  try {
    await lines.wait(/^floor ready$/, 30_000, child);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return processHandle(child);
}

/**
 * Measures the cells of `concurrency` that the current daemon measured (`cells`) again with a fresh floor
 * process: warmed up first as the daemons are, each cell with as many items as the daemon's.
 */
export async function measureFloor(
  env: BenchEnvironment,
  hash: string,
  concurrency: number,
  cells: readonly CliCell[],
  baselineCells: readonly BaselineCell[],
  run: { measure: (floor: CliDaemon, latencyMs: number, items: number) => Promise<CliCell>; warm: (floor: CliDaemon) => Promise<unknown> },
  logLine: (line: string) => void,
): Promise<FloorCell[]> {
  const out: FloorCell[] = [];
  const floor = await startFloor(env, hash, concurrency, `floor-c${concurrency}-${Date.now()}`, env.daemonExecArgv);
  try {
    await run.warm(floor);
    for (const current of cells.filter((c) => c.concurrency === concurrency)) {
      const cell = await run.measure(floor, current.latencyMs, current.items);
      const base = baselineCells.find((c) => c.latencyMs === current.latencyMs && c.concurrency === concurrency);
      const floorCell: FloorCell = {
        ...cell,
        currentOverFloor: round(current.daemonCpuMsPerItem / cell.daemonCpuMsPerItem, 3),
        ...(base ? { floorOverBaseline: round(cell.daemonCpuMsPerItem / base.daemonCpuMsPerItem, 3) } : {}),
      };
      out.push(floorCell);
      logLine(
        `floor, latency ${cell.latencyMs} ms, concurrency ${concurrency}, ${cell.items} items: ${cell.daemonPerS}/s vs raw ${cell.rawPerS}/s (ratio ${cell.ratio}); ` +
          `per item ${cell.daemonCpuMsPerItem} ms CPU, ${cell.redisCommandsPerItem} Redis commands; current/floor CPU ${floorCell.currentOverFloor}` +
          (floorCell.floorOverBaseline === undefined ? '' : `; floor/baseline CPU ${floorCell.floorOverBaseline}`),
      );
    }
  } finally {
    await floor.stop();
  }
  return out;
}

/** The floor rows: each cell's CPU per item with the least work on this stack, beside the daemon's and the baseline's. */
export function summarizeFloor(cells: readonly CliCell[], floorCells: readonly FloorCell[], ref: string | undefined): BenchResult['summary'] {
  const rows: BenchResult['summary'] = [];
  for (const f of floorCells) {
    const c = cells.find((x) => x.latencyMs === f.latencyMs && x.concurrency === f.concurrency);
    if (!c) continue;
    rows.push({
      measure: `floor (the least work on this stack), latency ${f.latencyMs} ms, concurrency ${f.concurrency} (${f.items} items)`,
      value: `${f.daemonCpuMsPerItem} ms CPU, ${f.redisCommandsPerItem} Redis commands per item, ratio to the raw loop ${f.ratio}`,
      baseline: `storesync run ${c.daemonCpuMsPerItem} ms CPU, ${c.redisCommandsPerItem} Redis commands per item, ratio ${c.ratio}`,
      verdict:
        `current/floor CPU ${f.currentOverFloor}` +
        (f.floorOverBaseline === undefined ? '' : `; floor/${ref ?? 'baseline'} CPU ${f.floorOverBaseline} (the lowest current/baseline this stack allows)`),
    });
  }
  return rows;
}
