/**
 * Checks at start that Redis will not evict BullMQ's keys under memory pressure (an outage is logged by
 * `redis-outage.ts`).
 */
import type { Redis } from 'ioredis';

import type { Logger } from '../log.js';
import { withTimeout } from '../queue/with-timeout.js';

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
