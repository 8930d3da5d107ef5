/**
 * The audit trail of admin actions: one log line `{audit: true, user, action, ...}` per resync request
 * and per dashboard mutation (retry, clean, add, pause, ...), and per failed login (`admin:login:failed`,
 * `admin:login:limited`: login-limit.ts), with secrets masked.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

import type { Logger } from '../log.js';
import { maskSecrets } from '../secrets.js';

/** One audited action. */
export interface AuditEntry {
  user: string;
  action: string;
  [detail: string]: unknown;
}

/** Writes one audit line (`warn` for a refused login, info otherwise). */
export function audit(logger: Logger, entry: AuditEntry, level: 'info' | 'warn' = 'info'): void {
  logger[level]({ audit: true, ...maskSecrets(entry) }, `audit: ${entry.action}`);
}

/**
 * Names a dashboard API route as an action: `/api/queues/:queueName/:jobId/retry` → `dashboard:retry`,
 * `/api/queues/:queueName/clean/:queueStatus` → `dashboard:clean`.
 */
export function dashboardAction(routeUrl: string): string {
  const api = routeUrl.indexOf('/api/');
  const parts = routeUrl
    .slice(api < 0 ? 0 : api + '/api/'.length)
    .split('/')
    .filter((part) => part !== '' && !part.startsWith(':'));
  // The leading resource ("queues") says nothing the rest does not.
  if (parts[0] === 'queues' && parts.length > 1) parts.shift();
  return `dashboard:${parts.join('/')}`;
}

/** A fastify `onResponse` hook that audits every request that changes something on the dashboard. */
export function dashboardAuditHook(logger: Logger) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    const params = (request.params ?? {}) as Record<string, unknown>;
    const body = request.body as Record<string, unknown> | undefined;
    audit(logger, {
      user: request.adminUser ?? 'anonymous',
      action: dashboardAction(request.routeOptions.url ?? request.url),
      ...params,
      ...(body && typeof body === 'object' && Object.keys(body).length > 0 ? { body } : {}),
      status: reply.statusCode,
    });
  };
}
