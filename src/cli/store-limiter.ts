/**
 * `store.rateLimit` for one-off CLI commands. Commands that run a flow's code need Redis anyway and take
 * their requests from the daemon's budget like any worker. The `store …` commands call the store
 * directly and must keep working while Redis is down (they are the repair tool): they share the budget
 * when Redis answers, and otherwise say on stderr that their few requests are not counted.
 */
import { createRedis, describeRedis } from '../queue/connection.js';
import { storeRateLimiter } from '../store/redis-request-limiter.js';
import type { RequestLimiter } from '../store/request-limiter.js';
import type { CliContext } from './context.js';

/** A limiter for a CLI command (none without `store.rateLimit`), and how to release its connection. */
export interface CliStoreLimiter {
  limiter?: RequestLimiter;
  close(): void;
}

/** Opens the shared budget if Redis answers within the store's connect timeout; see the module comment. */
export async function openCliStoreLimiter(ctx: CliContext): Promise<CliStoreLimiter> {
  const config = ctx.config();
  if (config.store.rateLimit === null) return { close: () => undefined };
  const redis = createRedis(config.redis, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.min(config.store.connectTimeoutMs, 2000),
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    ctx.io.stderr.write(
      `storesync: warning: Redis at ${describeRedis(config.redis)} does not answer (${(error as Error).message}); this command's store requests are not counted in store.rateLimit\n`,
    );
    return { close: () => undefined };
  }
  return { limiter: storeRateLimiter(config.store, config.redis.prefix, () => redis), close: () => redis.disconnect() };
}
