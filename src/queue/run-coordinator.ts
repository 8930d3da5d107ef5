/**
 * A node-cron `RunCoordinator` on Redis: with several daemon instances, each scheduled fire of a task
 * runs on exactly one of them. node-cron asks `shouldRun(key, ttlMs)` with a key made of the task name
 * and the scheduled fire time, so the instance that wins `SET NX` for that key runs the tick.
 */
import type { Redis } from 'ioredis';
import type { RunCoordinator } from 'node-cron';

import { stateKey } from './connection.js';

/** The lock is held at least this long, so an instance whose clock lags cannot win a tick already run. */
const MIN_LEASE_MS = 60_000;

/** Options of `RedisRunCoordinator`. */
export interface RedisRunCoordinatorOptions {
  redis: Redis;
  /** `config.redis.prefix`. */
  prefix: string;
  /** Identifies this instance in the lock value (helps when reading Redis by hand). */
  owner: string;
}

/** Elects one instance per (task, fire time) with `SET key owner NX PX lease`. */
export class RedisRunCoordinator implements RunCoordinator {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #owner: string;

  constructor(options: RedisRunCoordinatorOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
    this.#owner = options.owner;
  }

  /** True for the first instance asking about `key`; false for every other one until the lease ends. */
  async shouldRun(key: string, ttlMs: number): Promise<boolean> {
    // The lock is not released on completion: the key names one fire time, and releasing it would
    // let an instance that reaches the same tick a little later run it a second time.
    const result = await this.#redis.set(stateKey(this.#prefix, 'cron', key), this.#owner, 'PX', Math.max(ttlMs, MIN_LEASE_MS), 'NX');
    return result === 'OK';
  }
}
