/**
 * Adding inventory jobs: one job per SKU in flight. The SKU is the job name (findable in the dashboard)
 * and the deduplication id with `keepLastIfActive`, so a SKU has at most one active and one waiting
 * job: adds while one waits are absorbed by it, adds while one runs leave exactly one follow-up. A
 * custom `jobId = SKU` would instead silently drop adds while an old job with that id is kept.
 */
import type { Queue } from 'bullmq';

import type { InventoryJobData } from './types.js';

/** Adds per call to Redis; large batches (a reconcile) go in chunks. */
const CHUNK = 500;

/** Makes sure a job will run for each SKU after this call (values are already in the pending state). */
export async function enqueueSkus(
  queue: Queue<InventoryJobData>,
  skus: Iterable<string>,
  options: { force?: boolean } = {},
): Promise<number> {
  const unique = [...new Set(skus)];
  for (let start = 0; start < unique.length; start += CHUNK) {
    await queue.addBulk(
      unique.slice(start, start + CHUNK).map((sku) => ({
        name: sku,
        data: options.force ? { sku, force: true } : { sku },
        opts: { deduplication: { id: sku, keepLastIfActive: true } },
      })),
    );
  }
  return unique.length;
}
