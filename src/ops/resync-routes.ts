/**
 * `POST /admin/resync/inventory` (`{"skus"?: [...], "source"?: "name", "dryRun"?: bool, "force"?: bool, "confirmOrphans"?: bool}`) and
 * `POST /admin/resync/sales` (`{"from": "YYYY-MM-DD", "to": "YYYY-MM-DD", "dryRun"?: bool}`): each queues a
 * control job and answers 202 `{jobId}`; a bad body answers 400 naming the field.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { formatIssue } from '../errors.js';
import type { Logger } from '../log.js';
import { TimeoutError, withTimeout } from '../queue/with-timeout.js';
import { type ControlJobData, controlJobName, parseControlJob } from '../sync/control/index.js';
import { audit } from './audit.js';

/** Options of `registerResyncRoutes`. */
export interface ResyncRoutesOptions {
  enqueue: (data: ControlJobData) => Promise<string>;
  logger: Logger;
  /** Time allowed to queue the job (Redis may be down). */
  timeoutMs?: number;
}

/** Registers the resync routes in `app` (an authenticated context, prefix /admin). */
export function registerResyncRoutes(app: FastifyInstance, options: ResyncRoutesOptions): void {
  const timeoutMs = options.timeoutMs ?? 5000;

  const handle = (action: ControlJobData['action'], auditAction: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) {
      return reply.code(400).send({ error: 'the body must be a JSON object', issues: [{ field: '(body)', rule: 'a JSON object' }] });
    }
    const user = request.adminUser ?? 'anonymous';
    const parsed = parseControlJob({ ...body, action, requestedBy: user });
    if (!parsed.ok) {
      return reply.code(400).send({
        error: `invalid request body: ${parsed.issues.map(formatIssue).join('; ')}`,
        issues: parsed.issues.map(({ field, rule }) => ({ field, rule })),
      });
    }
    try {
      const jobId = await withTimeout(options.enqueue(parsed.value), timeoutMs, 'queueing the resync job');
      // The job name sums the request up (a few SKUs and a count), so a 10,000-SKU resync stays one short line.
      audit(options.logger, { user, action: auditAction, jobId, job: controlJobName(parsed.value), dryRun: parsed.value.dryRun });
      return reply.code(202).send({ jobId });
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      options.logger.warn({ action: auditAction }, 'resync refused: Redis did not answer');
      return reply.code(503).send({ error: 'Redis is not available; try again later' });
    }
  };

  app.post('/resync/inventory', handle('inventory-reconcile', 'resync:inventory'));
  app.post('/resync/sales', handle('sales-pull', 'resync:sales'));
}
