/**
 * Records refusals that happen before a job ever runs (an ERP row that breaks a store rule) as failed
 * jobs of their own queue, so they show in the dashboard next to the jobs that failed while running,
 * with the reason and the data, and can be counted and trimmed the same way.
 *
 * BullMQ has no "add as failed"; the documented way is to fetch the job manually with a worker that has
 * no processor and move it to failed with the lock token.
 */
import { randomUUID } from 'node:crypto';

import { type KeepJobs, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';

/** One refusal: the job name (e.g. `reject:SKU-1`), what was refused, and why. */
export interface FailedEntry {
  /**
   * Identifies the refusal (no `:` allowed): an entry whose id is already in the queue is not added
   * again, so a bad row read again (a poll's overlap window) shows once.
   */
  id?: string;
  name: string;
  data: Record<string, unknown>;
  reason: string;
}

/** Options of `FailedJobLog`. */
export interface FailedJobLogOptions {
  connection: Redis;
  /** BullMQ key prefix (`config.redis.prefix`). */
  prefix: string;
  queueName: string;
  /** `config.queue.removeOnFail`. */
  removeOnFail: KeepJobs;
  /** Leave the queue's metadata in Redis untouched (a read-only run such as a dry run). */
  skipMetasUpdate?: boolean;
  /** Receives connection errors of the log's queue and worker (a Redis outage). */
  onError?: (error: Error) => void;
}

/** Data stored on each failed entry; the reason travels with the job so any instance can fail it. */
interface EntryData extends Record<string, unknown> {
  reason: string;
}

/** A queue whose jobs are born failed. */
export class FailedJobLog {
  /** The queue, for the dashboard. */
  readonly queue: Queue<EntryData>;
  readonly #worker: Worker<EntryData>;
  readonly #token = randomUUID();
  readonly #removeOnFail: KeepJobs;

  constructor(options: FailedJobLogOptions) {
    this.queue = new Queue<EntryData>(options.queueName, {
      connection: options.connection,
      prefix: options.prefix,
      skipMetasUpdate: options.skipMetasUpdate ?? false,
    });
    this.#worker = new Worker<EntryData>(options.queueName, null, {
      connection: options.connection,
      prefix: options.prefix,
      autorun: false,
    });
    this.#removeOnFail = options.removeOnFail;
    // Without listeners BullMQ prints raw connection errors during a Redis outage; the daemon already
    // reports the outage once, so these go to the caller's handler (debug logs) only.
    const onError = options.onError ?? (() => undefined);
    this.queue.on('error', onError);
    this.#worker.on('error', onError);
  }

  /** Adds the entries not already in the queue, moves every waiting entry to failed; returns those added. */
  async record(entries: readonly FailedEntry[]): Promise<FailedEntry[]> {
    const fresh = await this.#withoutKnown(entries);
    if (fresh.length > 0) {
      await this.queue.addBulk(
        fresh.map((entry) => ({
          name: entry.name,
          data: { ...entry.data, reason: entry.reason },
          opts: { attempts: 1, removeOnFail: this.#removeOnFail, ...(entry.id === undefined ? {} : { jobId: entry.id }) },
        })),
      );
    }
    // Another instance may fail some of these and this one some of theirs: every entry carries its own
    // reason, and draining the queue also finishes entries left waiting by an instance that stopped.
    for (;;) {
      const job = await this.#worker.getNextJob(this.#token, { block: false });
      if (!job) return fresh;
      await job.moveToFailed(new UnrecoverableError(job.data.reason), this.#token, false);
    }
  }

  /** The entries whose id is not a job of the queue yet (entries without an id are always new). */
  async #withoutKnown(entries: readonly FailedEntry[]): Promise<FailedEntry[]> {
    const ids = [...new Set(entries.flatMap((entry) => (entry.id === undefined ? [] : [entry.id])))];
    if (ids.length === 0) return [...entries];
    const known = new Set<string>();
    await Promise.all(
      ids.map(async (id) => {
        if (await this.queue.getJob(id)) known.add(id);
      }),
    );
    const seen = new Set<string>();
    return entries.filter((entry) => {
      if (entry.id === undefined) return true;
      if (known.has(entry.id) || seen.has(entry.id)) return false;
      seen.add(entry.id);
      return true;
    });
  }

  /** Closes the queue and the manual worker (not the shared connection). */
  async close(): Promise<void> {
    await this.#worker.close();
    await this.queue.close();
  }
}
