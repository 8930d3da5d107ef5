/**
 * Adding inventory jobs. A job carries a batch of SKUs, never their values (those wait in the pending
 * state), so what BullMQ spends on a job (adding, activating, finishing, its events) is spent once per
 * batch, not once per SKU. A SKU changed again while its job waits simply lands in another job: the
 * first job to run sends the newest values and the other finds nothing left to send.
 *
 * A small set is spread over up to `spread` jobs (a worker process's PUT slots), a large one goes in
 * jobs of `batchSize`: ten changed SKUs make ten jobs that run side by side, ten thousand make two
 * hundred jobs of fifty. A poll that meets a backlog passes `spread` 1 (producer.ts): its SKUs fill the
 * slots anyway, since every SKU of every active job shares them, and fewer jobs cost fewer commands.
 * A job of one SKU is named after it; a batch after its first SKU and its size.
 *
 * Stock-outs first: every job has a BullMQ priority (lower runs first; a job without one would run
 * before all of them), and SKUs of different priorities never share a job, so a change that lowers the
 * stock the store may sell overtakes a backlog of increases, which overtake price-only changes.
 */
import type { Redis } from 'ioredis';

import { Queue } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { FlowDeps } from '../flow.js';
import { retryingJobOptions } from '../runtime.js';
import { targetLabel } from './target-key.js';
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

/** `inventory.batchSize`'s default: the most SKUs one job carries. */
const DEFAULT_BATCH_SIZE = 50;

/** Default of `spread`: `inventory.concurrency`'s default. */
const DEFAULT_SPREAD = 16;

/** Jobs per call to Redis; large sets (a reconcile) go in chunks. */
const CHUNK = 500;

/** Options of `enqueueSkus`. */
export interface EnqueueOptions {
  force?: boolean;
  /** Priority per SKU (default: `PRIORITY.other`). */
  priorities?: ReadonlyMap<string, number>;
  /** Priority of every SKU without an entry in `priorities`. */
  priority?: number;
  /** The most SKUs per job (`inventory.batchSize`). */
  batchSize?: number;
  /** How many jobs a small set is spread over (`inventory.concurrency`). */
  spread?: number;
  /** Milliseconds before the jobs may run. */
  delay?: number;
  /**
   * One job per SKU (batchSize 1), deduplicated by SKU as storesync 0.1 did: at most one waiting (or
   * retrying) and one running job per SKU. For SKUs handed out of batches: a SKU that keeps failing
   * while it keeps changing would otherwise gain a job of its own from every batch that carries it.
   */
  ownJobs?: boolean;
}

/** Makes sure a job will run for each SKU after this call (values are already in the pending state). */
export async function enqueueSkus(queue: Queue<InventoryJobData>, skus: Iterable<string>, options: EnqueueOptions = {}): Promise<number> {
  const byPriority = new Map<number, string[]>();
  const unique = new Set(skus);
  for (const sku of unique) {
    const priority = options.priorities?.get(sku) ?? options.priority ?? PRIORITY.other;
    const group = byPriority.get(priority);
    if (group) group.push(sku);
    else byPriority.set(priority, [sku]);
  }
  const jobs: Array<{ name: string; data: InventoryJobData; opts: { priority: number; delay?: number; deduplication?: { id: string; keepLastIfActive: true } } }> = [];
  for (const [priority, group] of [...byPriority].sort(([a], [b]) => a - b)) {
    const size = options.ownJobs ? 1 : batchSizeFor(group.length, options);
    for (let start = 0; start < group.length; start += size) {
      const batch = group.slice(start, start + size);
      jobs.push({
        name: jobName(batch),
        data: options.force ? { skus: batch, force: true } : { skus: batch },
        opts: {
          priority,
          ...(options.delay ? { delay: options.delay } : {}),
          // The values are read when the job runs, so an add while the SKU's job waits has nothing to add;
          // one while it runs is kept as the follow-up (BullMQ's keepLastIfActive).
          ...(options.ownJobs ? { deduplication: { id: batch[0] ?? '', keepLastIfActive: true as const } } : {}),
        },
      });
    }
  }
  for (let start = 0; start < jobs.length; start += CHUNK) await queue.addBulk(jobs.slice(start, start + CHUNK));
  return unique.size;
}

/** SKUs per job for a set of `count`: spread over `spread` jobs, at most `batchSize` each. */
export function batchSizeFor(count: number, options: Pick<EnqueueOptions, 'batchSize' | 'spread'> = {}): number {
  const { batchSize = DEFAULT_BATCH_SIZE, spread = DEFAULT_SPREAD } = options;
  return Math.max(1, Math.min(batchSize, Math.ceil(count / spread)));
}

/** `SKU-1` for a job of one SKU, `SKU-1 +49` for a batch of fifty; a target as `SKU-1 (site 2, price list 5)`. */
export function jobName(skus: readonly string[]): string {
  const first = skus[0] ?? '';
  const name = first.includes('\u001f') || first.includes('\u001e') ? targetLabel(first) : first;
  return skus.length === 1 ? name : `${name} +${skus.length - 1}`;
}

/** The `inventory` queue on `redis`, with the flow's job options (other flows queue SKUs through it too). */
export function openInventoryQueue(redis: Redis, config: FlowDeps['config'], skipMetasUpdate = false): Queue<InventoryJobData> {
  return new Queue<InventoryJobData>(QUEUE_NAMES.inventory, {
    connection: redis,
    prefix: config.redis.prefix,
    defaultJobOptions: retryingJobOptions(config, config.inventory, 0.5),
    skipMetasUpdate,
  });
}
