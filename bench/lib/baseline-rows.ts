/**
 * The cli benchmark's A/B rows (`--baseline`): each cell's cost beside the baseline build's, the idle RSS
 * and the overlap window's re-read cost of both.
 */
import type { BaselineCell, CliCell, OverlapWindowRow } from './cli-cells.js';
import type { BenchResult } from './results.js';
import { round } from './stats.js';

/** The A/B rows: each cell's cost beside the baseline's, and the idle RSS of both. */
export function summarizeBaseline(
  cells: readonly CliCell[],
  ab: { ref: string; commit: string; idle: { rssMiB: number } | undefined; cells: readonly BaselineCell[]; overlapWindow: OverlapWindowRow | undefined },
  idle: { rssMiB: number } | undefined,
  windowRow: OverlapWindowRow | undefined,
): BenchResult['summary'] {
  const rows: BenchResult['summary'] = [];
  for (const b of ab.cells) {
    const c = cells.find((x) => x.latencyMs === b.latencyMs && x.concurrency === b.concurrency);
    if (!c) continue;
    rows.push({
      measure: `A/B against ${ab.ref} (${ab.commit.slice(0, 7)}), latency ${b.latencyMs} ms, concurrency ${b.concurrency} (${b.items} items each)`,
      value: `current: ${c.daemonCpuMsPerItem} ms CPU, ${c.redisCommandsPerItem} Redis commands per item, ratio to the raw loop ${c.ratio}`,
      baseline: `${ab.ref}: ${b.daemonCpuMsPerItem} ms CPU, ${b.redisCommandsPerItem} Redis commands per item, ratio ${b.ratio}`,
      verdict: `current/baseline: CPU ${b.cpuPerItemRatio} (goal ≤ 0.4 ${b.cpuPerItemRatio <= 0.4 ? 'met' : 'missed'}), commands ${b.redisCommandsPerItemRatio}`,
    });
  }
  if (ab.idle && idle) {
    rows.push({ measure: `A/B against ${ab.ref}: idle storesync run RSS`, value: `current ${idle.rssMiB} MiB`, baseline: `${ab.ref} ${ab.idle.rssMiB} MiB`, verdict: 'reported' });
  }
  if (ab.overlapWindow && windowRow) {
    rows.push({
      measure: `A/B against ${ab.ref}: CPU per row re-read in the overlap window (${windowRow.rows} rows, nothing new)`,
      value: `current ${windowRow.usPerRowRead} µs (${windowRow.cpuMsPerS} ms per second, ${windowRow.emptyCpuMsPerS} emptied)`,
      baseline: `${ab.ref} ${ab.overlapWindow.usPerRowRead} µs (${ab.overlapWindow.cpuMsPerS} ms per second, ${ab.overlapWindow.emptyCpuMsPerS} emptied)`,
      verdict: `current/baseline ${round(windowRow.usPerRowRead / ab.overlapWindow.usPerRowRead, 3)}`,
    });
  }
  return rows;
}
