/**
 * The inventory updates the throughput benchmarks send, and how many of them make a run of a few
 * seconds at the raw loop's estimated ceiling.
 */
import { sku } from './bench-erp.js';
import type { PutBody } from './raw-loops.js';
import { round } from './stats.js';

let runNumber = 0;

/** `items` updates of SKU first…first+items−1 whose values differ on every call, so change detection never skips a PUT. */
export function freshBodies(items: number, first = 1): PutBody[] {
  runNumber += 1;
  return Array.from({ length: items }, (_, i) => ({
    InternalId: 0 as const,
    Code: sku(first + i),
    Stock: (runNumber * 7919 + i) % 999_999,
    Price: round(1 + ((runNumber * 31 + i) % 99_999) / 100),
  }));
}

/**
 * The first SKU of a warm-up's updates: SKUs no measured run uses (those are 1…6,000), so a measured row
 * stamped before a warm-up row of the same SKU (a run inserted right after the warm-up reaches back as
 * many ms as it has rows) is never taken for an older version and skipped.
 */
export const WARM_UP_FIRST_SKU = 10_001;

/** The number of items that keeps a raw run near `targetS` seconds, within `minItems`…`maxItems`. */
export function itemsFor(latencyMs: number, concurrency: number, options: { targetS: number; minItems: number; maxItems: number }): number {
  const ceiling = Math.min((concurrency * 1000) / (latencyMs + 0.7), 5000);
  return Math.max(options.minItems, Math.min(options.maxItems, Math.round(ceiling * options.targetS)));
}
