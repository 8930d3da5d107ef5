/**
 * The fulfillment flow's Redis state, under `redis.prefix`:
 *   state:fulfil:cursor:{source}     JSON cursor of each shipment source (`cursors`, a SourceCursors)
 *   state:fulfil:applied:{saleId}    version of the last update applied to the sale (expires in 30 days)
 */
import type { Redis } from 'ioredis';

import { stateKey } from '../../queue/connection.js';
import { SourceCursors } from '../drain-source.js';

/** Long enough for any re-read of an old ERP change, short enough for Redis to forget finished sales. */
const APPLIED_TTL_S = 30 * 86_400;

/** Reads and writes the fulfillment state; see the module comment. */
export class FulfillmentState {
  readonly #redis: Redis;
  readonly #prefix: string;

  /** The cursor of each source of this flow. */
  readonly cursors: SourceCursors;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.cursors = new SourceCursors(redis, prefix, 'fulfil');
  }

  /** The version of the last update applied to a sale, or null. */
  async appliedVersion(saleId: number): Promise<number | null> {
    const raw = await this.#redis.get(stateKey(this.#prefix, 'fulfil', 'applied', saleId));
    return raw === null ? null : Number(raw);
  }

  /** Records that the update of `version` is on the store. */
  async setAppliedVersion(saleId: number, version: number): Promise<void> {
    await this.#redis.set(stateKey(this.#prefix, 'fulfil', 'applied', saleId), String(version), 'EX', APPLIED_TTL_S);
  }
}
