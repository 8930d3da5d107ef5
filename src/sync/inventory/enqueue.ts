/**
 * Adding inventory jobs: one job per SKU in flight. The SKU is the job name (findable in the dashboard)
 * and the deduplication id with `keepLastIfActive`, so a SKU has at most one active and one waiting
 * job: adds while one waits are absorbed by it, adds while one runs leave exactly one follow-up. A
 * custom `jobId = SKU` would instead silently drop adds while an old job with that id is kept.
 *
 * Stock-outs first: every job has a BullMQ priority (lower runs first; a job without one would run
 * before all of them), so a change that lowers the stock the store may sell overtakes a backlog of
 * increases, which overtake price-only changes. An add absorbed by a SKU's waiting job does not change
 * that job's priority by itself, so an urgent add raises the waiting job's priority.
 */
import { Job, type Queue } from 'bullmq';
import { Redis } from 'ioredis';

import type { InventoryJobData } from './types.js';

/** Job priorities, most urgent first. */
export const PRIORITY = {
  /** The published stock goes down (a sale, a stock-out, a higher safety stock). */
  decrease: 1,
  /** The published stock goes up. */
  increase: 2,
  /** Prices and other fields. */
  other: 3,
} as const;

/** Adds per call to Redis; large batches (a reconcile) go in chunks. */
const CHUNK = 500;

/** Options of `enqueueSkus`. */
export interface EnqueueOptions {
  force?: boolean;
  /** Priority per SKU (default: `PRIORITY.other`). */
  priorities?: ReadonlyMap<string, number>;
  /** Priority of every SKU without an entry in `priorities`. */
  priority?: number;
}

/** Makes sure a job will run for each SKU after this call (values are already in the pending state). */
export async function enqueueSkus(queue: Queue<InventoryJobData>, skus: Iterable<string>, options: EnqueueOptions = {}): Promise<number> {
  const unique = [...new Set(skus)];
  const priorityOf = (sku: string): number => options.priorities?.get(sku) ?? options.priority ?? PRIORITY.other;
  for (let start = 0; start < unique.length; start += CHUNK) {
    const chunk = unique.slice(start, start + CHUNK);
    const jobs = await queue.addBulk(
      chunk.map((sku) => ({
        name: sku,
        data: options.force ? { sku, force: true } : { sku },
        opts: { deduplication: { id: sku, keepLastIfActive: true }, priority: priorityOf(sku) },
      })),
    );
    const urgent = jobs.filter((job, i) => priorityOf(chunk[i] ?? '') === PRIORITY.decrease && job.id !== undefined).map((job) => job.id as string);
    await raisePriorities(queue, urgent, PRIORITY.decrease);
  }
  return unique.length;
}

/**
 * Moves the SKUs' waiting jobs (possibly older ones that absorbed the adds) up to `priority`. One round
 * trip reads their priorities; only a job found with a lower one (rare) is changed.
 */
async function raisePriorities(queue: Queue<InventoryJobData>, jobIds: readonly string[], priority: number): Promise<void> {
  if (jobIds.length === 0) return;
  // The flows open their queues on an ioredis connection of their own: read through it in one pipeline.
  const client = queue.opts.connection;
  let lower: readonly string[] = jobIds;
  if (client instanceof Redis) {
    const pipeline = client.pipeline();
    for (const id of jobIds) pipeline.hget(queue.toKey(id), 'priority');
    const results = (await pipeline.exec()) ?? [];
    lower = jobIds.filter((_, i) => Number(results[i]?.[1] ?? 0) > priority);
  }
  for (const id of lower) {
    const job = await Job.fromId<InventoryJobData>(queue, id);
    // Only a job still waiting its turn can move; an active one leaves its follow-up as added last.
    if (job && (await job.getState()) === 'prioritized') await job.changePriority({ priority }).catch(() => undefined);
  }
}
