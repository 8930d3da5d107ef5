/**
 * Records refusals that happen before a job ever runs (an ERP row that breaks a store rule) as failed
 * jobs of their own queue, so they show in the dashboard next to the jobs that failed while running,
 * with the reason and the data, and can be counted and trimmed the same way.
 *
 * BullMQ has no "add as failed"; the documented way is to fetch the job manually with a worker that has
 * no processor and move it to failed with the lock token.
 *
 * A connection dropped mid-call loses replies, and ioredis sends the unanswered commands again once it
 * reconnects, so a command may run twice: fetching twice leaves the first entry active under this
 * instance's lock, failing twice answers "missing lock". Both are finished here, so an entry is
 * returned as added (counted by the caller) once. (With `maxRetriesPerRequest: null`, storesync's
 * connections, a dropped connection delays a command but never fails it.)
 */
import { randomUUID } from 'node:crypto';

import type { Job, KeepJobs } from 'bullmq';
import type { Redis } from 'ioredis';

import { Queue, UnrecoverableError, Worker } from './bullmq-parts.js';

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
  readonly #connection: Redis;
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
    this.#connection = options.connection;
    this.#removeOnFail = options.removeOnFail;
    // Without listeners BullMQ prints raw connection errors during a Redis outage; the daemon already
    // reports the outage once, so these go to the caller's handler (debug logs) only.
    const onError = options.onError ?? (() => undefined);
    this.queue.on('error', onError);
    this.#worker.on('error', onError);
  }

  /**
   * Adds the entries not already in the queue and moves every waiting entry to failed; returns those
   * not failed before (an entry left waiting or active by an interrupted call included), each once
   * (two instances recording the same entry at the same moment may both return it).
   */
  async record(entries: readonly FailedEntry[]): Promise<FailedEntry[]> {
    const fresh = await this.#notFailedYet(entries);
    if (fresh.length > 0) {
      // An id already in the queue (left waiting by an interrupted call) is not added again by BullMQ.
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
      if (!job) break;
      await this.#fail(job, this.#token);
    }
    // Entries left active: under this instance's lock (a fetch sent again after a lost reply), or with
    // no lock left (an instance that stopped between fetching and failing them).
    for (const job of await this.queue.getActive()) {
      if (job.id === undefined) continue;
      const lock = await this.#connection.get(`${this.queue.toKey(job.id)}:lock`);
      if (lock === null || lock === this.#token) await this.#fail(job, lock ?? '0');
    }
    return fresh;
  }

  /** Moves `job` to failed; a failure sent again after its reply was lost finds it failed already. */
  async #fail(job: Job<EntryData>, token: string): Promise<void> {
    try {
      await job.moveToFailed(new UnrecoverableError(job.data.reason), token, false);
    } catch (error) {
      const state = job.id === undefined ? 'unknown' : await this.queue.getJobState(job.id);
      // 'unknown': removed since (the queue's removeOnFail count), so it was failed.
      if (state !== 'failed' && state !== 'unknown') throw error;
    }
  }

  /** The entries not failed in the queue yet (left waiting or active by an interrupted call), once each; entries without an id are always new. */
  async #notFailedYet(entries: readonly FailedEntry[]): Promise<FailedEntry[]> {
    const ids = [...new Set(entries.flatMap((entry) => (entry.id === undefined ? [] : [entry.id])))];
    if (ids.length === 0) return [...entries];
    const failed = new Set<string>();
    await Promise.all(
      ids.map(async (id) => {
        if ((await this.queue.getJobState(id)) === 'failed') failed.add(id);
      }),
    );
    const seen = new Set<string>();
    return entries.filter((entry) => {
      if (entry.id === undefined) return true;
      if (failed.has(entry.id) || seen.has(entry.id)) return false;
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
