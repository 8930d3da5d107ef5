/**
 * `GET /admin/inventory/{sku}[?site=N]`: the explanation of a SKU (read only), and
 * `POST /admin/sales/processed` (`{"siteId"?: N, "saleIds": [...], "bookedAt"?: ISO time}`): the ERP
 * booked these sales, so their reservations are released (audited), and
 * `POST /admin/inventory/vanished/confirm` (`{"source": NAME}`): applies the source's vanished.action to
 * the SKUs its mass guard holds (audited). A bad request answers 400 naming the field.
 */
import type { FastifyInstance } from 'fastify';

import { didYouMean } from '../config/did-you-mean.js';
import { ConfigError, ValidationError, type ValidationIssue } from '../errors.js';
import type { Logger } from '../log.js';
import type { ConfirmReport, ProcessedOutcome, SkuExplanation } from '../sync/inventory/index.js';
import { audit } from './audit.js';

/** What the routes call. */
export interface InventoryRoutesOptions {
  explain(sku: string, options: { siteId?: number; priceList?: string }): Promise<SkuExplanation>;
  markProcessed(request: { siteId: number; saleIds: number[]; bookedAt?: number }): Promise<ProcessedOutcome[]>;
  /** Applies the vanished.action of `source` to what its mass guard holds. */
  confirmVanished(source: string): Promise<ConfirmReport>;
  /** The site of sales named without one (`sales.pull.siteId`, `store.siteId`); null: required. */
  defaultSiteId: number | null;
  logger: Logger;
}

/** The fields of a `POST /admin/sales/processed` body. */
const PROCESSED_FIELDS = ['siteId', 'saleIds', 'bookedAt'];
/** The query parameters of `GET /admin/inventory/{sku}`. */
const EXPLAIN_QUERY = ['site', 'priceList'];

const isPositiveInt = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value > 0;

/** Checks a `POST /admin/sales/processed` body. */
export function parseProcessedBody(body: unknown, defaultSiteId: number | null): { siteId: number; saleIds: number[]; bookedAt?: number } | ValidationIssue[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [{ field: '(body)', value: body, rule: 'a JSON object' }];
  const { siteId = defaultSiteId, saleIds, bookedAt, ...rest } = body as Record<string, unknown>;
  const issues: ValidationIssue[] = Object.keys(rest).map((field) => ({ field, value: rest[field], rule: `not a known field${didYouMean(field, PROCESSED_FIELDS)}` }));
  if (!isPositiveInt(siteId)) issues.push({ field: 'siteId', value: siteId, rule: 'a positive integer (required when neither sales.pull.siteId nor store.siteId is set, and with inventory.sites)' });
  if (!Array.isArray(saleIds) || saleIds.length === 0 || !saleIds.every(isPositiveInt)) {
    issues.push({ field: 'saleIds', value: saleIds, rule: 'a non-empty array of positive integers' });
  }
  const at = typeof bookedAt === 'string' && /(Z|[+-]\d{2}:?\d{2})$/.test(bookedAt) ? Date.parse(bookedAt) : Number.NaN;
  if (bookedAt !== undefined && Number.isNaN(at)) issues.push({ field: 'bookedAt', value: bookedAt, rule: 'an ISO 8601 time with a zone' });
  if (issues.length > 0) return issues;
  return { siteId: siteId as number, saleIds: saleIds as number[], ...(bookedAt === undefined ? {} : { bookedAt: at }) };
}

/** Registers the routes in `app` (an authenticated context, prefix /admin). */
export function registerInventoryRoutes(app: FastifyInstance, options: InventoryRoutesOptions): void {
  app.get('/inventory/:sku', async (request, reply) => {
    const { sku } = request.params as { sku: string };
    const { site, priceList, ...unknown } = request.query as Record<string, string | undefined>;
    const extra = Object.keys(unknown);
    if (extra.length > 0) {
      const issues = extra.map((field) => ({ field, rule: `not a known query parameter${didYouMean(field, EXPLAIN_QUERY)}` }));
      return reply.code(400).send({ error: `invalid query: ${issues.map((issue) => `${issue.field}: ${issue.rule}`).join('; ')}`, issues });
    }
    const siteId = site === undefined ? undefined : Number(site);
    if (siteId !== undefined && !isPositiveInt(siteId)) {
      return reply.code(400).send({ error: `query parameter site must be a positive integer (got ${site})`, issues: [{ field: 'site', rule: 'a positive integer' }] });
    }
    try {
      return reply.send(await options.explain(sku, { ...(siteId === undefined ? {} : { siteId }), ...(priceList === undefined ? {} : { priceList }) }));
    } catch (error) {
      // A price list not configured.
      if (error instanceof ValidationError) return reply.code(400).send({ error: error.message, issues: error.issues });
      throw error;
    }
  });

  app.post('/sales/processed', async (request, reply) => {
    const parsed = parseProcessedBody(request.body ?? {}, options.defaultSiteId);
    if (Array.isArray(parsed)) {
      return reply.code(400).send({
        error: `invalid request body: ${parsed.map((issue) => `${issue.field}: ${issue.rule}`).join('; ')}`,
        issues: parsed.map(({ field, rule }) => ({ field, rule })),
      });
    }
    const outcomes = await options.markProcessed(parsed);
    audit(options.logger, { user: request.adminUser ?? 'anonymous', action: 'sales:processed', siteId: parsed.siteId, saleIds: parsed.saleIds, booked: outcomes.filter((o) => o.result === 'booked').length });
    return reply.send({ sales: outcomes });
  });

  app.post('/inventory/vanished/confirm', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const { source, ...rest } = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : { source: undefined };
    const issues: ValidationIssue[] = Object.keys(rest).map((field) => ({ field, value: rest[field], rule: `not a known field${didYouMean(field, ['source'])}` }));
    if (typeof source !== 'string' || source === '') issues.push({ field: 'source', value: source, rule: 'the name of an inventory source' });
    if (issues.length > 0) {
      return reply.code(400).send({ error: `invalid request body: ${issues.map((issue) => `${issue.field}: ${issue.rule}`).join('; ')}`, issues: issues.map(({ field, rule }) => ({ field, rule })) });
    }
    try {
      const report = await options.confirmVanished(source as string);
      audit(options.logger, { user: request.adminUser ?? 'anonymous', action: 'inventory:vanished:confirm', source, skus: report.confirmed });
      return await reply.send(report);
    } catch (error) {
      if (error instanceof ConfigError) return reply.code(404).send({ error: error.message });
      throw error;
    }
  });
}
