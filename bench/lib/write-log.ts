/**
 * The simulator's write log as the benchmarks follow it: a mark, the writes after it, and the span of
 * a run's writes. The writes themselves are kept so that a benchmark can check what the store was sent,
 * not only how many PUTs came.
 */
import { waitFor } from '../../src/wait-for.js';
import type { BenchEnvironment } from './environment.js';
import type { SimulatorProcess, Write } from './simulator-process.js';

/** Follows one simulator's write log: where it stands, and the writes after a mark. */
export class WriteLog {
  #seq = 0;
  readonly #sim: Pick<SimulatorProcess, 'writes'>;

  /** Follows `env`'s simulator, or the one given. */
  constructor(source: BenchEnvironment | Pick<SimulatorProcess, 'writes'>) {
    this.#sim = 'sim' in source ? source.sim : source;
  }

  /** Moves the mark past every write so far. */
  async mark(): Promise<void> {
    for (;;) {
      const writes = await this.#sim.writes(this.#seq);
      const last = writes.at(-1);
      if (!last) return;
      this.#seq = last.seq;
    }
  }

  /**
   * Waits until `count` writes follow the mark, or `timeoutMs` passed; returns the writes seen (fewer
   * than `count` on a time-out: the caller says what is missing) and moves the mark past them.
   */
  async collect(count: number, timeoutMs: number): Promise<Write[]> {
    const seen: Write[] = [];
    const deadline = Date.now() + timeoutMs;
    await waitFor(
      async () => {
        const writes = await this.#sim.writes(this.#seq);
        seen.push(...writes);
        this.#seq = writes.at(-1)?.seq ?? this.#seq;
        return seen.length >= count || Date.now() > deadline;
      },
      // Only a simulator that stops answering runs into this limit: the check itself ends at the deadline.
      { timeoutMs: timeoutMs + 30_000, intervalMs: 100, message: `${count} store writes` },
    );
    return seen;
  }

  /** Waits until `count` writes follow the mark; returns the time from the first to the last, ms. */
  async span(count: number, timeoutMs: number): Promise<number> {
    const seen = await this.collect(count, timeoutMs);
    if (seen.length < count) throw new Error(`timed out after ${timeoutMs} ms waiting for ${count} store writes (${seen.length} came)`);
    return spanMs(seen, count);
  }

  /** Waits until no write has come for `quietMs`, moves the mark past every write, and returns them. */
  async quiet(quietMs: number, timeoutMs: number): Promise<Write[]> {
    const seen: Write[] = [];
    let lastAt = Date.now();
    await waitFor(
      async () => {
        const writes = await this.#sim.writes(this.#seq);
        const last = writes.at(-1);
        if (last) {
          seen.push(...writes);
          this.#seq = last.seq;
          lastAt = Date.now();
        }
        return Date.now() - lastAt >= quietMs;
      },
      { timeoutMs, intervalMs: 100, message: `no store write for ${quietMs} ms` },
    );
    return seen;
  }
}

/** The time the first `count` writes took, ms: their span stretched by one interval (N writes, N − 1 gaps). */
export function spanMs(writes: readonly Write[], count: number): number {
  const first = writes[0]?.at ?? 0;
  const last = writes[Math.min(count, writes.length) - 1]?.at ?? first;
  return ((last - first) * count) / Math.max(1, count - 1);
}
