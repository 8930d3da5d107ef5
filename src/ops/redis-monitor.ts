/**
 * Watches the daemon's Redis connections so an outage is logged once (not once per connection and
 * retry), and checks at start that Redis will not evict BullMQ's keys under memory pressure.
 */
import type { Redis } from 'ioredis';

import type { Logger } from '../log.js';
import { withTimeout } from '../queue/with-timeout.js';

/** Logs Redis going away and coming back, once per outage. */
export class RedisMonitor {
  readonly #logger: Logger;
  #down = false;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Follows a connection; it also keeps ioredis from printing unhandled `error` events. */
  track(connection: Redis): void {
    // A quick restart may bring Redis back before any reconnect fails, so the lost connection is
    // noticed by the reconnect being scheduled, not only by errors.
    const lost = (error?: Error): void => {
      if (!this.#down) {
        this.#down = true;
        this.#logger.warn(error ? { err: error } : {}, 'Redis connection lost; reconnecting');
      } else if (error) {
        this.#logger.debug({ err: error }, 'Redis still unavailable');
      }
    };
    connection.on('error', (error: Error) => lost(error));
    connection.on('reconnecting', () => lost());
    connection.on('ready', () => {
      if (this.#down) {
        this.#down = false;
        this.#logger.info('Redis connection back');
      }
    });
  }
}

/**
 * Warns unless `maxmemory-policy` is `noeviction`: under any other policy Redis may drop queue keys
 * when memory runs short and jobs vanish. Managed Redis often disables CONFIG; that is only noted.
 */
export async function checkEvictionPolicy(redis: Redis, logger: Logger, timeoutMs = 3000): Promise<string | undefined> {
  try {
    const reply = (await withTimeout(redis.config('GET', 'maxmemory-policy'), timeoutMs, 'CONFIG GET')) as unknown;
    const policy = Array.isArray(reply) ? (reply[1] as unknown) : undefined;
    if (typeof policy !== 'string') {
      logger.info('Redis did not report maxmemory-policy; make sure it is noeviction');
      return undefined;
    }
    if (policy !== 'noeviction') {
      logger.warn({ maxmemoryPolicy: policy }, `Redis maxmemory-policy is "${policy}": set it to "noeviction", or Redis may evict queued jobs`);
    }
    return policy;
  } catch (error) {
    logger.info({ err: error }, 'could not read Redis maxmemory-policy (CONFIG may be disabled); make sure it is noeviction');
    return undefined;
  }
}
