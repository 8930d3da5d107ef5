/** The cli benchmark's measured cells and rows, shared by its row builders (cli-bench.ts, baseline-rows.ts, floor.ts). */

/** One latency × concurrency cell. */
export interface CliCell {
  latencyMs: number;
  concurrency: number;
  items: number;
  rawPerS: number;
  daemonPerS: number;
  ratio: number;
  daemonCpuMsPerItem: number;
  redisCommandsPerItem: number;
  redisCpuMsPerItem: number;
  redisTopCommands: Record<string, number>;
  rssMiB: number;
}

/** The A/B of one cell: the baseline build's daemon measured like the current one, right after it. */
export interface BaselineCell extends CliCell {
  /** Current ÷ baseline. */
  cpuPerItemRatio: number;
  redisCommandsPerItemRatio: number;
}

/** The overlap row: the daemon's CPU with a steady stream's window of rows in the log, and without. */
export interface OverlapWindowRow {
  rows: number;
  cpuMsPerS: number;
  emptyCpuMsPerS: number;
  /** CPU per row re-read, µs (each poll re-reads every row). */
  usPerRowRead: number;
}
