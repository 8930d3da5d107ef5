/**
 * "Is this still the Redis I knew?" A process keeps some things in memory about what Redis holds: per
 * polled source, the rows its overlap window already delivered (delivered-window.ts) and when its last
 * complete poll began and where it caught up (`PollHistory`). That memory is only true of the Redis it
 * was learned from. A Redis that lost its last writes — a failover to a replica that had not received
 * them (Sentinel, Cluster), a restart from an append-only file missing its last second
 * (`appendfsync everysec`), a flush — holds an older cursor and older merged versions than the memory
 * assumes, and a row the memory says was delivered is one Redis never received: skipped at every
 * re-read, its SKU would keep an older figure for good.
 *
 * The identity of Redis is the `run_id` of the server that serves storesync's keys (new at every start
 * of a server, different on every server, so a failover or a restart changes it) and a marker key of
 * storesync's own, `<prefix>:state:epoch`, holding a random value written when it is missing (gone
 * after a flush or on an empty server). Both are read by one script called with the marker key, so on
 * Cluster they come from the master of storesync's slot. A lost write cannot happen without one of the
 * two changing: a running server forgets nothing it acknowledged.
 *
 * `RedisBoundMemory` holds one unit of such memory: `current()` reads the identity and, when it differs
 * from the one the memory was learned under, drops the memory and starts a fresh one, which re-reads
 * from what Redis now holds (the stored cursor, less the whole overlap). The check is made at the start
 * of every poll, before the memory is used; a failover in the middle of a poll is caught by the next.
 */
import { randomBytes } from 'node:crypto';

import type { Redis } from 'ioredis';

import type { Logger } from '../log.js';
import { stateKey } from '../queue/connection.js';

/**
 * The identity in one round trip (a write first, then INFO: allowed in a script), already joined as
 * `<run id>/<epoch>`: one short bulk reply. INFO is parsed by the script, on the server; the daemon
 * sends the script's SHA (EVALSHA through `defineCommand`; its text only when the server lacks it, as
 * after a restart) and reads one string.
 */
const IDENTITY = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then
  redis.call('SET', KEYS[1], ARGV[1])
  epoch = ARGV[1]
end
local info = redis.call('INFO', 'server')
return (string.match(info, 'run_id:(%x+)') or '') .. '/' .. epoch
`;

/** The key of the epoch marker under `prefix`. */
export function epochKey(prefix: string): string {
  return stateKey(prefix, 'epoch');
}

/** A connection with the identity script defined on it. */
type WithIdentity = Redis & { storesyncIdentity(key: string, fresh: string): Promise<string> };

/** Connections the script is defined on (once each). */
const defined = new WeakSet<Redis>();

function withIdentity(redis: Redis): WithIdentity {
  if (!defined.has(redis)) {
    redis.defineCommand('storesyncIdentity', { numberOfKeys: 1, lua: IDENTITY });
    defined.add(redis);
  }
  return redis as WithIdentity;
}

/** Who Redis is now: `<run id>/<epoch>`; writes the epoch marker when it is missing. */
export async function redisIdentity(redis: Redis, prefix: string): Promise<string> {
  return withIdentity(redis).storesyncIdentity(epochKey(prefix), randomBytes(12).toString('hex'));
}

/** What a reset tells: the identity the memory was learned under and the one Redis has now. */
export interface IdentityChange {
  before: string;
  after: string;
}

/** One unit of memory about Redis' state, dropped when Redis is no longer the one it was learned from. */
export class RedisBoundMemory<T> {
  readonly #make: () => T;
  #memory: T;
  #identity: string | undefined;

  constructor(make: () => T) {
    this.#make = make;
    this.#memory = make();
  }

  /** The identity of the Redis the memory was learned from, once checked. */
  get identity(): string | undefined {
    return this.#identity;
  }

  /** The memory as it is, without checking Redis (for reading only). */
  get peek(): T {
    return this.#memory;
  }

  /**
   * The memory, after checking who Redis is: a fresh one (and `onReset` told) when Redis changed since
   * the last check. The first check only learns the identity: a new memory is empty anyway.
   */
  async current(redis: Redis, prefix: string, onReset?: (change: IdentityChange) => void): Promise<T> {
    const identity = await redisIdentity(redis, prefix);
    if (this.#identity !== undefined && this.#identity !== identity) {
      this.#memory = this.#make();
      onReset?.({ before: this.#identity, after: identity });
    }
    this.#identity = identity;
    return this.#memory;
  }
}

/** Logs that a source's memory was dropped (warn: it follows a failover or a Redis that lost writes). */
export function forgetLogged(rt: { logger: Logger }, flow: string, source: string, change: IdentityChange): void {
  rt.logger.warn(
    { flow, source, redisBefore: change.before, redisNow: change.after },
    'Redis is not the one this poll memory was learned from (a failover or a restart that may have lost writes): the source is re-read from the cursor Redis holds, with its whole overlap',
  );
}
