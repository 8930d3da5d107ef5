/**
 * The store writes one worker process has in flight: `inventory.concurrency` slots shared by every
 * SKU of every active job. Jobs carry batches, so a job's SKUs wait here for a slot rather than in the
 * queue; the most urgent waiting SKU (lowest job priority, then the earliest) takes the next free slot,
 * so a stock-out fetched while other batches drain is written next. While any SKU of an active job
 * waits, every slot is busy: no slot idles at the end of a batch.
 */

/** A counting semaphore whose waiters are served by priority, then in arrival order. */
export class StoreSlots {
  #free: number;
  /** Waiters per priority, each in arrival order. */
  readonly #waiting = new Map<number, Array<() => void>>();

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves when the caller holds a slot; `release` it once the write is done. */
  acquire(priority: number): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.#waiting.get(priority);
      if (queue) queue.push(resolve);
      else this.#waiting.set(priority, [resolve]);
    });
  }

  /** Hands the slot to the most urgent waiter, or frees it. */
  release(): void {
    let best: number | undefined;
    for (const [priority, queue] of this.#waiting) {
      if (queue.length > 0 && (best === undefined || priority < best)) best = priority;
    }
    const next = best === undefined ? undefined : this.#waiting.get(best)?.shift();
    if (next) next();
    else this.#free += 1;
  }

  /** Runs `work` holding a slot. */
  async run<T>(priority: number, work: () => Promise<T>): Promise<T> {
    await this.acquire(priority);
    try {
      return await work();
    } finally {
      this.release();
    }
  }
}
