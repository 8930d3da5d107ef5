/**
 * Store records the client set aside (a sale or an inventory item that did not fit its schema), kept
 * where an admin sees them: failed jobs of the `store-rejects` queue in the dashboard, one per record
 * (resource + id), with the field, value and rule. A record still bad at the next read keeps its one
 * entry; a record that reads fine again has its entry removed, so what the queue shows is what is
 * still wrong. Counted in `storesync_store_records_rejected_total{resource}` when first parked.
 */
import { createHash } from 'node:crypto';

import type { KeepJobs } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { QUEUE_NAMES, stateKey } from '../queue/connection.js';
import { type FailedEntry, FailedJobLog } from '../queue/failed-job-log.js';
import { describeReject, type RecordReject, type StoreResource } from '../store/records.js';

/** Records named in the log per `park` call; the others are counted in one line. */
const LOGGED_PER_PARK = 10;

/** Options of `StoreRejects`. */
export interface StoreRejectsOptions {
  connection: Redis;
  prefix: string;
  /** `config.queue.removeOnFail`. */
  removeOnFail: KeepJobs;
  metrics: Metrics;
  logger: Logger;
  /** A read-only run (dry run): opening the queue writes nothing. */
  skipMetasUpdate?: boolean;
}

/** The job id of a record's entry: one per resource and id (BullMQ ids may not contain ":"). */
export function storeRejectJobId(reject: Pick<RecordReject, 'resource' | 'id' | 'issues'>): string {
  // A record without a usable key is named by what is wrong with it, so the same record is still one entry.
  const key = reject.id ?? `nokey-${createHash('sha256').update(describeReject(reject)).digest('hex').slice(0, 24)}`;
  return `${reject.resource}-${key.replace(/:/g, '_')}`;
}

/** The parked store rejects of one process (a flow's runtime owns one). */
export class StoreRejects {
  readonly #log: FailedJobLog;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #metrics: Metrics;
  readonly #logger: Logger;

  constructor(options: StoreRejectsOptions) {
    this.#redis = options.connection;
    this.#prefix = options.prefix;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#log = new FailedJobLog({
      connection: options.connection,
      prefix: options.prefix,
      queueName: QUEUE_NAMES.storeRejects,
      removeOnFail: options.removeOnFail,
      skipMetasUpdate: options.skipMetasUpdate ?? false,
      onError: (error) => options.logger.debug({ err: error.message }, 'store rejects queue: connection error'),
    });
  }

  /** The queue, for the dashboard. */
  get queue() {
    return this.#log.queue;
  }

  /** Parks `rejects` (those not parked yet); returns how many were new. */
  async park(rejects: readonly RecordReject[]): Promise<number> {
    if (rejects.length === 0) return 0;
    const entries: FailedEntry[] = rejects.map((reject) => ({
      id: storeRejectJobId(reject),
      name: `reject:${reject.resource}:${reject.id ?? '(no key)'}`,
      data: {
        resource: reject.resource,
        id: reject.id,
        field: reject.field,
        value: reject.value,
        rule: reject.rule,
        issues: reject.issues,
        endpoint: reject.endpoint,
      },
      reason: `${reject.endpoint}: ${describeReject(reject)}`,
    }));
    for (const resource of new Set(rejects.map((reject) => reject.resource))) {
      const ids = rejects.filter((reject) => reject.resource === resource).map(storeRejectJobId);
      await this.#redis.sadd(this.#key(resource), ...ids);
    }
    const added = await this.#log.record(entries);
    // StoresyncStoreRecordsRejected fires on these: an error line each, a long list collapsed into a count.
    for (const [index, entry] of added.entries()) {
      this.#metrics.storeRecordsRejected.inc({ resource: String(entry.data.resource) });
      if (index < LOGGED_PER_PARK) this.#logger.error({ resource: entry.data.resource, id: entry.data.id }, `store record set aside (see store-rejects): ${entry.reason}`);
    }
    if (added.length > LOGGED_PER_PARK) this.#logger.error({ more: added.length - LOGGED_PER_PARK }, `${added.length - LOGGED_PER_PARK} more store records set aside (see store-rejects)`);
    return added.length;
  }

  /** Removes the entries of records of `resource` that were read fine (ids as the store sent them). */
  async clear(resource: StoreResource, ids: Iterable<string>): Promise<number> {
    const parked = new Set(await this.#redis.smembers(this.#key(resource)));
    if (parked.size === 0) return 0;
    let cleared = 0;
    for (const id of ids) {
      const jobId = storeRejectJobId({ resource, id, issues: [] });
      if (!parked.has(jobId)) continue;
      await this.#log.queue.remove(jobId);
      await this.#redis.srem(this.#key(resource), jobId);
      this.#logger.info({ resource, id }, 'store record reads fine again; its store-rejects entry is removed');
      cleared++;
    }
    return cleared;
  }

  /** Closes the queue (not the shared connection). */
  async close(): Promise<void> {
    await this.#log.close();
  }

  #key(resource: string): string {
    return stateKey(this.#prefix, 'store-rejects', resource);
  }
}
