/**
 * The queue dashboard, built at its first request. bull-board, its UI and their routes cost the
 * daemon several MB of memory that a daemon nobody looks at should not carry (idle RSS, bench/README.md),
 * but fastify takes no route once it listens. So the dashboard lives in a second fastify instance that
 * never listens: the admin context (authentication done) forwards `/admin/queues` and everything below
 * it there with `inject`, bodies untouched, and sends back its answer. The second instance audits the
 * dashboard's mutations itself (it knows their routes); the admin user reaches it in a header that only
 * this forwarding sets, since nothing else can reach an instance that does not listen.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

import type { Logger } from '../log.js';
import { dashboardAuditHook } from './audit.js';
import type { DashboardOptions } from './dashboard.js';
import { logFailedRequests } from './request-errors.js';

/** Carries the authenticated admin user from the forwarding route to the dashboard instance. */
const USER_HEADER = 'x-storesync-admin-user';

/** Headers of one hop that the forwarding must not copy (inject and fastify set their own). */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'upgrade']);

/** Options of `registerLazyDashboard`: the dashboard's, and where to log. */
export interface LazyDashboardOptions extends DashboardOptions {
  logger: Logger;
}

/**
 * Registers the forwarding routes in `admin` (an authenticated context whose prefix `basePath` starts
 * with); the dashboard is built on first use.
 */
export async function registerLazyDashboard(admin: FastifyInstance, options: LazyDashboardOptions): Promise<void> {
  if (!options.basePath.startsWith(`${admin.prefix}/`)) throw new Error(`dashboard path ${options.basePath} is outside ${admin.prefix}`);
  // The same path relative to the admin context, e.g. `/queues` inside `/admin`.
  const mountPath = options.basePath.slice(admin.prefix.length);
  let built: Promise<FastifyInstance> | undefined;
  const dashboard = (): Promise<FastifyInstance> => {
    built ??= buildDashboard(options).catch((error: unknown) => {
      // The next request tries again.
      built = undefined;
      throw error;
    });
    return built;
  };
  admin.addHook('onClose', async () => {
    const instance = await built?.catch(() => undefined);
    await instance?.close();
  });

  await admin.register(async (scope) => {
    // Bodies go through as they came: the dashboard instance parses them.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      const target = await dashboard();
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (value !== undefined && !HOP_HEADERS.has(name) && name !== USER_HEADER) headers[name] = value;
      }
      headers[USER_HEADER] = request.adminUser ?? '';
      const answer = await target.inject({
        method: request.method as 'GET',
        url: request.url,
        headers,
        ...(Buffer.isBuffer(request.body) ? { payload: request.body } : {}),
      });
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_HEADERS.has(name)) void reply.header(name, value);
      }
      return reply.code(answer.statusCode).send(answer.rawPayload);
    };
    scope.all(mountPath, forward);
    scope.all(`${mountPath}/*`, forward);
  });
}

/** The dashboard instance: bull-board under `basePath`, audited, the user taken from the forwarding header. */
async function buildDashboard(options: LazyDashboardOptions): Promise<FastifyInstance> {
  const { registerDashboard } = await import('./dashboard.js');
  const app = Fastify({ logger: false });
  app.addHook('onRequest', async (request) => {
    const user = request.headers[USER_HEADER];
    if (typeof user === 'string' && user !== '') request.adminUser = user;
  });
  const audited = dashboardAuditHook(options.logger);
  app.addHook('onResponse', async (request, reply) => {
    if (request.url.startsWith(`${options.basePath}/api/`)) await audited(request, reply);
  });
  logFailedRequests(app, options.logger);
  await registerDashboard(app, { queues: options.queues, controlQueueName: options.controlQueueName, basePath: options.basePath });
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ error: 'not found' }));
  await app.ready();
  options.logger.info('queue dashboard loaded');
  return app;
}
