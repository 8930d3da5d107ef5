/**
 * One-off CLI commands that run a flow's code (a reconcile, a sales pull or export) need the same
 * dependencies as the daemon: built from the configuration, and closed when the command ends.
 */
import type { Redis } from 'ioredis';

import { Metrics } from '../metrics.js';
import { createRedis } from '../queue/connection.js';
import { StoreClient } from '../store/client.js';
import { storeRateLimiter } from '../store/redis-request-limiter.js';
import type { FlowDeps } from '../sync/flow.js';
import type { CliContext } from './context.js';

/** Runs `action` with flow dependencies built from the configuration, closing them afterwards. */
export async function withFlowDeps<T>(ctx: CliContext, action: (deps: FlowDeps) => Promise<T>): Promise<T> {
  const config = ctx.config();
  const logger = ctx.logger();
  const connections: Redis[] = [];
  const connect = (): Redis => {
    const connection = createRedis(config.redis);
    connections.push(connection);
    return connection;
  };
  // These commands need Redis anyway: their store requests come out of the daemon's budget.
  const limiter = storeRateLimiter(config.store, config.redis.prefix, connect);
  const store = new StoreClient({ config: config.store, logger, ...(limiter ? { limiter } : {}) });
  try {
    return await action({ config, connect, store, logger, metrics: new Metrics({ defaultMetrics: false }) });
  } finally {
    await store.close();
    for (const connection of connections) connection.disconnect();
  }
}
