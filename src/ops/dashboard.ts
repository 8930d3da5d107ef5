/**
 * The queue dashboard (bull-board) at /admin/queues: every queue, job data and results shown with
 * secrets masked. The control queue carries a JSON schema, so the dashboard's Add-job form starts from
 * a valid resync request; an added control job is validated (400 naming the field), stamped with the
 * admin user and given a readable name before it is queued. The page loads nothing from outside the
 * machine (a shop's back office may be offline): bull-board's link to its web fonts is taken out (its
 * styles fall back to the system's fonts), and a Content-Security-Policy lets the browser load only what
 * storesync serves.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { formatIssue } from '../errors.js';
import { maskSecrets } from '../secrets.js';
import { controlJobJsonSchema, controlJobName, parseControlJob } from '../sync/control/index.js';

/** What each queue's card says on the dashboard. */
const DESCRIPTIONS: Readonly<Record<string, string>> = {
  inventory: 'ERP stock and price changes sent to the store, a batch of SKUs per job (a failing SKU gets a job of its own, named after it)',
  sales: 'store sales exported to the ERP and acknowledged, one job per sale',
  fulfillment: 'shipment updates written back to store sales',
  'inventory-rejects': 'ERP rows refused before queueing (field, value, rule); fix the row at the source',
  'store-rejects': 'store records (sales, items) that did not fit on read: resource, id, field, value, rule; removed once they read fine',
  control: 'resync requests: use "Add job" for a reconcile, a dry run or a sales re-pull',
};

/** What the dashboard's page may load: bull-board's own scripts, styles and images, from storesync only. */
const PAGE_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  // bull-board's page and its editor set inline styles.
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

/** `html` without its `<link>`s to other hosts (bull-board's page links Google's web fonts). */
export function withoutOutsideLinks(html: string): string {
  return html.replace(/<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\/[^>]*>\s*/gi, '');
}

/** Options of `registerDashboard`. */
export interface DashboardOptions {
  queues: readonly Queue[];
  /** The queue whose Add-job form starts resyncs. */
  controlQueueName: string;
  /** Where the dashboard is served, e.g. `/admin/queues`: the URL the browser sees. */
  basePath: string;
}

/** Registers the dashboard at `basePath` in `app`, an instance without a prefix (`lazy-dashboard.ts` builds it). */
export async function registerDashboard(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const adapters = options.queues.map((queue) => {
    const adapter = new BullMQAdapter(queue, {
      readOnlyMode: false,
      allowRetries: true,
      description: DESCRIPTIONS[queue.name] ?? '',
      ...(queue.name === options.controlQueueName ? { jobDataSchema: controlJobJsonSchema() } : {}),
    });
    adapter.setFormatter('data', (data: unknown) => maskSecrets(data));
    adapter.setFormatter('returnValue', (value: unknown) => maskSecrets(value));
    return adapter;
  });
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(options.basePath);
  createBullBoard({
    queues: adapters,
    serverAdapter,
    options: { uiConfig: { boardTitle: 'storesync', hideDocsLink: true } },
  });

  const addRoute = `${options.basePath}/api/queues/:queueName/add`;
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST' || request.routeOptions.url !== addRoute) return;
    if ((request.params as { queueName?: string }).queueName !== options.controlQueueName) return;
    const body = (request.body ?? {}) as { name?: unknown; data?: unknown };
    const parsed = parseControlJob(body.data);
    if (!parsed.ok) {
      await reply.code(400).send({
        error: `invalid control job: ${parsed.issues.map(formatIssue).join('; ')}`,
        issues: parsed.issues.map(({ field, rule }) => ({ field, rule })),
      });
      return;
    }
    const data = { ...parsed.value, requestedBy: request.adminUser };
    body.data = data;
    // The form's blank name becomes "__default__"; a name saying what the job does reads better.
    if (typeof body.name !== 'string' || body.name === '' || body.name === '__default__') body.name = controlJobName(data);
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    if (typeof payload !== 'string' || !String(reply.getHeader('content-type') ?? '').startsWith('text/html')) return payload;
    void reply.header('content-security-policy', PAGE_POLICY);
    return withoutOutsideLinks(payload);
  });

  await app.register(serverAdapter.registerPlugin(), { prefix: options.basePath });
}
