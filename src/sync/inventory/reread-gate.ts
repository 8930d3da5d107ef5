/**
 * Holds inventory writes after a failover until the sources were re-read under the new master. Redis that
 * lost writes (a lagging replica promoted, an AOF missing its tail) may hold a SKU's older pending figure,
 * with its job, while the store already has a newer one (the newer merge and its "applied" record were
 * lost): written now, that older figure would replace the newer one until the next poll brings it back.
 * The producer drops its memory on such a change and re-reads each source from the cursor Redis holds
 * (../redis-identity.ts), and after each complete poll records under which Redis it ran
 * (`<prefix>:state:inv:reread:<source>` = the identity). A worker that sees the identity change waits,
 * before its next write, until every scheduled source was re-read under the new identity — by then Redis
 * holds the newest ERP version again — or until `timeoutMs` passed (a source polled less often than
 * that: the wait is bounded, and the write goes ahead with a warning).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { Redis } from 'ioredis';

import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { stateKey } from '../../queue/connection.js';
import { redisIdentity } from '../redis-identity.js';

/** The key naming the Redis under which `source`'s last complete poll ran. */
export function rereadKey(prefix: string, source: string): string {
  return stateKey(prefix, 'inv', 'reread', source);
}

/** Records that `source` was polled completely under Redis `identity`. */
export async function markReread(redis: Redis, prefix: string, source: string, identity: string): Promise<void> {
  await redis.set(rereadKey(prefix, source), identity);
}

const CHECK_EVERY_MS = 200;

/** One per worker: `pass()` before each job. */
export class RereadGate {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #sources: readonly string[];
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  /** The Redis under which writing is known to be safe. */
  #cleared: string | undefined;

  constructor(rt: { redis: Redis; config: Readonly<Config>; logger: Logger }, timeoutMs = 2 * rt.config.redis.failoverTimeoutMs) {
    this.#redis = rt.redis;
    this.#prefix = rt.config.redis.prefix;
    this.#sources = rt.config.inventory.sources.filter((source) => source.enabled && source.schedule !== undefined).map((source) => source.name);
    this.#timeoutMs = timeoutMs;
    this.#logger = rt.logger;
  }

  /** Resolves when a job may write: at once, unless Redis changed since the last job and the sources were not re-read since. */
  async pass(signal?: AbortSignal): Promise<void> {
    const identity = await redisIdentity(this.#redis, this.#prefix);
    if (this.#cleared === undefined || this.#cleared === identity) {
      this.#cleared ??= identity;
      return;
    }
    const deadline = Date.now() + this.#timeoutMs;
    for (;;) {
      const marks = this.#sources.length === 0 ? [] : await this.#redis.mget(...this.#sources.map((source) => rereadKey(this.#prefix, source)));
      if (marks.every((mark) => mark === identity)) break;
      signal?.throwIfAborted();
      if (Date.now() >= deadline) {
        this.#logger.warn({ sources: this.#sources, waitedMs: this.#timeoutMs }, 'new Redis master: the sources were not re-read in time; inventory writes go on');
        break;
      }
      await sleep(CHECK_EVERY_MS);
    }
    this.#cleared = identity;
  }
}
