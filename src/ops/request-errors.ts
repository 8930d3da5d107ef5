/**
 * Logs every request that ended in an error, in whichever fastify instance serves it (the daemon's, and
 * the dashboard's that `lazy-dashboard.ts` builds on first use, whose errors no one else would see).
 */
import type { FastifyInstance } from 'fastify';

import type { Logger } from '../log.js';

export function logFailedRequests(app: FastifyInstance, logger: Logger): void {
  app.addHook('onError', async (request, _reply, error) => {
    logger.warn({ url: request.url, method: request.method, err: error }, 'request failed');
  });
}
