/**
 * The queue dashboard (bull-board) at /admin/queues: every queue, job data and results shown with
 * secrets masked. The control queue carries a JSON schema, so the dashboard's Add-job form starts from
 * a valid resync request; an added control job is validated (400 naming the field), stamped with the
 * admin user and given a readable name before it is queued.
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

  await app.register(serverAdapter.registerPlugin(), { prefix: options.basePath });
}
