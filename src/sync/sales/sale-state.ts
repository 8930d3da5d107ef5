/**
 * The Redis record of each sale's progress — the truth about "exported" and "acknowledged" once the
 * BullMQ jobs are trimmed — plus the sorted set of sales not yet acknowledged (for the age gauge) and
 * the pull watermark. Keys, under `redis.prefix`:
 *   state:sales:{site}:{id}        hash {state: exported|acked, erpRef, exportedAt, ackedAt}
 *   state:sales:pending            zset member "{site}:{id}", score = creation (or first-seen) time, ms
 *   state:sales:watermark:{site}   ISO UTC start time of the last complete scheduled pull
 */
import type { Redis } from 'ioredis';

import { stateKey } from '../../queue/connection.js';

/** How far a sale has got. */
export interface SaleState {
  state: 'exported' | 'acked';
  erpRef: string;
  exportedAt: number;
  ackedAt?: number;
}

/** The sale identity everything is keyed by. */
export interface SaleKey {
  siteId: number;
  saleId: number;
}

function parse(hash: Record<string, string>): SaleState | null {
  if (hash.state !== 'exported' && hash.state !== 'acked') return null;
  return {
    state: hash.state,
    erpRef: hash.erpRef ?? '',
    exportedAt: Number(hash.exportedAt ?? 0),
    ...(hash.ackedAt ? { ackedAt: Number(hash.ackedAt) } : {}),
  };
}

/** Reads and writes the sales state; see the module comment. */
export class SaleStateStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ackedTtlSeconds: number;

  /** `ackedTtlSeconds`: how long an acknowledged sale's record is kept (it must outlive the pull window). */
  constructor(redis: Redis, prefix: string, ackedTtlSeconds: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#ackedTtlSeconds = ackedTtlSeconds;
  }

  #key(key: SaleKey): string {
    return stateKey(this.#prefix, 'sales', key.siteId, key.saleId);
  }

  get #pendingKey(): string {
    return stateKey(this.#prefix, 'sales', 'pending');
  }

  /** The sale's record, or null when it was never exported. */
  async get(key: SaleKey): Promise<SaleState | null> {
    return parse(await this.#redis.hgetall(this.#key(key)));
  }

  /** Records of many sales in one round trip, in order. */
  async getMany(keys: readonly SaleKey[]): Promise<Array<SaleState | null>> {
    if (keys.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const key of keys) pipeline.hgetall(this.#key(key));
    const results = (await pipeline.exec()) ?? [];
    return results.map(([error, hash]) => {
      if (error) throw error;
      return parse(hash as Record<string, string>);
    });
  }

  /** Records the export. A sale already acknowledged stays acknowledged (a forced re-export). */
  async markExported(key: SaleKey, erpRef: string, at: number): Promise<void> {
    const hash = this.#key(key);
    await this.#redis
      .multi()
      .hset(hash, { erpRef, exportedAt: String(at) })
      // The state only moves forward: exported → acked, never back.
      .hsetnx(hash, 'state', 'exported')
      .exec();
  }

  /** Records the acknowledgement: the sale leaves the pending set and its record expires in time. */
  async markAcked(key: SaleKey, at: number): Promise<void> {
    const hash = this.#key(key);
    await this.#redis
      .multi()
      .hset(hash, { state: 'acked', ackedAt: String(at) })
      .expire(hash, this.#ackedTtlSeconds)
      .zrem(this.#pendingKey, `${key.siteId}:${key.saleId}`)
      .exec();
  }

  /** Adds sales waiting for export or acknowledgement; a sale already listed keeps its first score. */
  async addPending(entries: ReadonlyArray<SaleKey & { since: number }>): Promise<void> {
    if (entries.length === 0) return;
    const args = entries.flatMap((entry) => [entry.since, `${entry.siteId}:${entry.saleId}`]);
    await this.#redis.zadd(this.#pendingKey, 'NX', ...args);
  }

  /** Removes a sale from the pending set without acknowledging it (export only, ack disabled). */
  async removePending(key: SaleKey): Promise<void> {
    await this.#redis.zrem(this.#pendingKey, `${key.siteId}:${key.saleId}`);
  }

  /** The time (ms) a sale has been pending since, or null when it is not pending. */
  async pendingSince(key: SaleKey): Promise<number | null> {
    const score = await this.#redis.zscore(this.#pendingKey, `${key.siteId}:${key.saleId}`);
    return score === null ? null : Number(score);
  }

  /** Every sale exported or waiting and not yet acknowledged (reservations are rebuilt from them). */
  async pendingKeys(): Promise<SaleKey[]> {
    const members = await this.#redis.zrange(this.#pendingKey, 0, -1);
    return members.flatMap((member) => {
      const [siteId, saleId] = member.split(':').map(Number);
      return siteId === undefined || saleId === undefined || Number.isNaN(siteId) || Number.isNaN(saleId) ? [] : [{ siteId, saleId }];
    });
  }

  /** The time (ms) of the oldest pending sale, or null when none is pending. */
  async oldestPending(): Promise<number | null> {
    const [, score] = await this.#redis.zrange(this.#pendingKey, 0, 0, 'WITHSCORES');
    return score === undefined ? null : Number(score);
  }

  /** Start time (ms) of the last complete scheduled pull of a site, or null before the first. */
  async watermark(siteId: number): Promise<number | null> {
    const value = await this.#redis.get(stateKey(this.#prefix, 'sales', 'watermark', siteId));
    const ms = value === null ? Number.NaN : Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }

  /** Stores the watermark, in UTC. */
  async setWatermark(siteId: number, at: number): Promise<void> {
    await this.#redis.set(stateKey(this.#prefix, 'sales', 'watermark', siteId), new Date(at).toISOString());
  }
}
