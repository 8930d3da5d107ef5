/**
 * The one mechanism that coordinates scheduled runs across daemon instances, on Redis. Every instance
 * fires the same cron tick from its own clock; each asks `claim(task, fireTime)`, and one Lua script
 * decides atomically, per task:
 * - a tick whose fire time is not after the last one claimed was taken by another instance: `claimed`;
 * - otherwise the tick is recorded as claimed, and the run lock is taken unless a run of the task is
 *   still going (on any instance, this one included): `run`, else `busy` (the tick is skipped).
 * So each tick runs on one instance at most, and a run slower than its interval never overlaps the next.
 *
 * Why not BullMQ job schedulers (`upsertJobScheduler`): a scheduler adds the next iteration as soon as
 * the current one starts, so an idle worker on another instance runs it while the slow one is still
 * going (bullmq#2285), and skipping a tick while a run is in flight is not supported (bullmq#3032);
 * global concurrency 1 would serialise them but queue the missed ticks instead of skipping them, and
 * stale schedulers would outlive the sources removed from the configuration.
 */
import type { Redis } from 'ioredis';

import { stateKey } from './connection.js';
import { RELEASE_IF_OWNER, RENEW_IF_OWNER } from './redis-lock.js';

/** How long a run lock lives without renewal; the holder renews it while the run goes on. */
export const RUN_LEASE_MS = 60_000;

/** How long the last claimed fire time of a task is remembered (longer than any schedule's interval). */
const LAST_TICK_TTL_MS = 8 * 86_400_000;

/**
 * KEYS[1] last claimed fire time, KEYS[2] run lock; ARGV[1] fire time (ms), ARGV[2] owner,
 * ARGV[3] run lease (ms), ARGV[4] last-tick TTL (ms), ARGV[5] '1' when the owner runs no such task now.
 *
 * A run lock held by the claiming instance itself while it runs nothing of the task is a lock whose
 * release Redis forgot (a failover to a replica that missed it, an AOF that lost its tail) or that
 * could not be released (Redis down at the end of the run): it is taken over instead of skipping
 * every tick until its lease runs out.
 */
const CLAIM = `
local last = tonumber(redis.call('GET', KEYS[1]) or '-1')
if last >= tonumber(ARGV[1]) then return 'claimed' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
local holder = redis.call('GET', KEYS[2])
if (not holder) or (ARGV[5] == '1' and holder == ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
  return 'run'
end
return 'busy'
`;

/** What `claim` decided for one tick. */
export type TickClaim = 'run' | 'claimed' | 'busy';

/** Claims cron ticks and holds run locks for one instance (`owner`). */
export class TickLock {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #owner: string;

  constructor(redis: Redis, prefix: string, owner: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#owner = owner;
  }

  /**
   * Decides whether this instance runs `task`'s tick fired at `fireTime`; `run` means it holds the run
   * lock. `idleHere`: this instance runs nothing of `task` now (a lock of its own is then a stale one).
   */
  async claim(task: string, fireTime: number, idleHere = false): Promise<TickClaim> {
    const result = await this.#redis.eval(
      CLAIM,
      2,
      this.#key('tick', task),
      this.#key('run', task),
      fireTime,
      this.#owner,
      RUN_LEASE_MS,
      LAST_TICK_TTL_MS,
      idleHere ? '1' : '0',
    );
    return result as TickClaim;
  }

  /** Extends this instance's run lock of `task` (a run longer than the lease keeps it). */
  async renew(task: string): Promise<void> {
    await this.#redis.eval(RENEW_IF_OWNER, 1, this.#key('run', task), this.#owner, RUN_LEASE_MS);
  }

  /** Releases this instance's run lock of `task`, so the next tick may run. */
  async release(task: string): Promise<void> {
    await this.#redis.eval(RELEASE_IF_OWNER, 1, this.#key('run', task), this.#owner);
  }

  #key(kind: 'tick' | 'run', task: string): string {
    return stateKey(this.#prefix, 'cron', kind, task);
  }
}
