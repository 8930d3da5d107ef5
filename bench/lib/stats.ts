/** Small statistics for benchmark figures: percentiles, rates and ratios rounded for reading. */

/** The `p`-th percentile (0–100) of `values` by nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Rounds to `digits` decimals (figures in result files stay readable). */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Items per second over a duration in ms. */
export function rate(items: number, ms: number): number {
  return ms > 0 ? round((items * 1000) / ms, 1) : Number.NaN;
}

/** `value / baseline`, rounded to 3 decimals. */
export function ratio(value: number, baseline: number): number {
  return baseline > 0 ? round(value / baseline, 3) : Number.NaN;
}
