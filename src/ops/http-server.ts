/**
 * The HTTP side of the daemon (every role): `/metrics`, `/livez`, `/readyz`, and under `/admin` (always
 * authenticated; browsers log in at `/admin/login`) the queue dashboard, the resync endpoints, the SKU
 * explanation and the booked-sales call.
 * The dashboard (bull-board, a few MB of memory) is loaded at its first request (`lazy-dashboard.ts`), and
 * not served at all without admin credentials: /admin then refuses every request, so it could never be seen.
 */
import type { Queue } from 'bullmq';
import Fastify, { type FastifyInstance } from 'fastify';

import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ControlJobData } from '../sync/control/index.js';
import { adminAuthHook, adminEnabled } from './admin-auth.js';
import { registerAdminLogin } from './admin-login.js';
import type { Readiness } from './health.js';
import { type InventoryRoutesOptions, registerInventoryRoutes } from './inventory-routes.js';
import { registerLazyDashboard } from './lazy-dashboard.js';
import { LoginLimit } from './login-limit.js';
import { logFailedRequests } from './request-errors.js';
import { registerResyncRoutes } from './resync-routes.js';

/** Everything under this prefix requires admin credentials. */
export const ADMIN_PREFIX = '/admin';
/** Where the dashboard lives. */
export const DASHBOARD_PATH = `${ADMIN_PREFIX}/queues`;

/** What the HTTP server serves. */
export interface HttpServerOptions {
  config: Readonly<Pick<Config, 'http' | 'admin'>>;
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  /** Every queue, for the dashboard. */
  queues: readonly Queue[];
  control: { queueName: string; enqueue(data: ControlJobData): Promise<string> };
  /** Time a resync request waits for Redis to queue its job before answering 503. */
  enqueueTimeoutMs?: number;
  /** `GET /admin/inventory/{sku}` and `POST /admin/sales/processed`; absent: not served. */
  inventory?: Omit<InventoryRoutesOptions, 'logger'>;
}

/** A listening server. */
export interface HttpServer {
  /** `http://host:port` actually bound (port 0 picks one). */
  readonly url: string;
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

/** Builds the routes without listening. */
export async function buildHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const logger = options.logger.child({ component: 'http' });
  const app = Fastify({ logger: false });

  logFailedRequests(app, logger);

  app.get('/livez', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const report = await options.readiness.check();
    return reply.code(report.ok ? 200 : 503).send({ status: report.ok ? 'ready' : 'not ready', ...report });
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.type(options.metrics.registry.contentType).send(text);
  });

  app.get('/', async (_request, reply) => reply.redirect(DASHBOARD_PATH));

  // One count of failed logins per server: the login page's and the Authorization header's.
  const loginLimit = new LoginLimit();
  if (adminEnabled(options.config.admin)) {
    await registerAdminLogin(app, { admin: options.config.admin, logger, home: DASHBOARD_PATH, cookiePath: ADMIN_PREFIX, loginLimit });
  }
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', adminAuthHook(options.config.admin, logger, loginLimit));
      registerResyncRoutes(admin, {
        logger,
        enqueue: (data) => options.control.enqueue(data),
        ...(options.enqueueTimeoutMs ? { timeoutMs: options.enqueueTimeoutMs } : {}),
      });
      if (options.inventory) registerInventoryRoutes(admin, { ...options.inventory, logger });
      if (adminEnabled(options.config.admin)) {
        await registerLazyDashboard(admin, {
          queues: options.queues,
          controlQueueName: options.control.queueName,
          basePath: DASHBOARD_PATH,
          logger,
        });
      }
      admin.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ error: 'not found' }));
    },
    { prefix: ADMIN_PREFIX },
  );
  return app;
}

/** Builds the server and listens on `config.http`. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const app = await buildHttpServer(options);
  await app.listen({ host: options.config.http.host, port: options.config.http.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.config.http.port;
  const host = options.config.http.host.includes(':') ? `[${options.config.http.host}]` : options.config.http.host;
  return {
    url: `http://${host}:${port}`,
    app,
    close: () => app.close(),
  };
}
