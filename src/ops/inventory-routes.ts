/**
 * `GET /admin/inventory/{sku}[?site=N]`: the explanation of a SKU (read only), and
 * `POST /admin/sales/processed` (`{"siteId"?: N, "saleIds": [...], "bookedAt"?: ISO time}`): the ERP
 * booked these sales, so their reservations are released (audited), and
 * `GET /admin/inventory/vanished?source=NAME[&limit=N][&after=CODE]`: a page of the SKUs the mass guard
 * holds for the source, in Code order (`next`: the `after` of the following page, null at the end),
 * `POST /admin/inventory/vanished/confirm` (`{"source": NAME}`): applies the source's vanished.action to
 * them, and `POST /admin/inventory/vanished/keep`: records them as vanished and writes nothing (both
 * audited). A bad request answers 400 naming the field; an unknown source 404.
 */
import type { FastifyInstance } from 'fastify';

import { didYouMean } from '../config/did-you-mean.js';
import { ConfigError, ValidationError, type ValidationIssue } from '../errors.js';
import type { Logger } from '../log.js';
import type { ConfirmReport, HeldPage, HeldPageOptions, ProcessedOutcome, SkuExplanation } from '../sync/inventory/index.js';
import { audit } from './audit.js';

/** What the routes call. */
export interface InventoryRoutesOptions {
  explain(sku: string, options: { siteId?: number; priceList?: string }): Promise<SkuExplanation>;
  markProcessed(request: { siteId: number; saleIds: number[]; bookedAt?: number }): Promise<ProcessedOutcome[]>;
  /** A page of what the mass guard of `source` holds. */
  heldPage(source: string, options: HeldPageOptions): Promise<HeldPage>;
  /** Applies the vanished.action of `source` to what its mass guard holds. */
  confirmVanished(source: string): Promise<ConfirmReport>;
  /** Records what the mass guard of `source` holds as vanished, writing nothing. */
  keepVanished(source: string): Promise<ConfirmReport>;
  /** The site of sales named without one (`sales.pull.siteId`, `store.siteId`); null: required. */
  defaultSiteId: number | null;
  logger: Logger;
}

/** The fields of a `POST /admin/sales/processed` body. */
const PROCESSED_FIELDS = ['siteId', 'saleIds', 'bookedAt'];
/** The query parameters of `GET /admin/inventory/{sku}`. */
const EXPLAIN_QUERY = ['site', 'priceList'];
/** The query parameters of `GET /admin/inventory/vanished`. */
const HELD_QUERY = ['source', 'limit', 'after'];
/** Codes per page of `GET /admin/inventory/vanished`: by default, and at most. */
const HELD_PAGE = { default: 1000, max: 10_000 };

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

/** Checks the query of `GET /admin/inventory/vanished`. */
export function parseHeldQuery(query: Record<string, string | undefined>): { source: string; options: HeldPageOptions } | ValidationIssue[] {
  const { source, limit, after, ...rest } = query;
  const issues: ValidationIssue[] = Object.keys(rest).map((field) => ({ field, value: rest[field], rule: `not a known query parameter${didYouMean(field, HELD_QUERY)}` }));
  if (source === undefined || source === '') issues.push({ field: 'source', value: source, rule: 'the name of an inventory source' });
  const count = limit === undefined ? HELD_PAGE.default : Number(limit);
  if (!isPositiveInt(count) || count > HELD_PAGE.max) issues.push({ field: 'limit', value: limit, rule: `a positive integer up to ${HELD_PAGE.max}` });
  if (issues.length > 0) return issues;
  return { source: source as string, options: { limit: count, ...(after === undefined ? {} : { after }) } };
}

/** The 400 answer's body for `issues`. */
function invalid(what: string, issues: readonly ValidationIssue[]) {
  return { error: `invalid ${what}: ${issues.map((issue) => `${issue.field}: ${issue.rule}`).join('; ')}`, issues: issues.map(({ field, rule }) => ({ field, rule })) };
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
    if (Array.isArray(parsed)) return reply.code(400).send(invalid('request body', parsed));
    const outcomes = await options.markProcessed(parsed);
    audit(options.logger, { user: request.adminUser ?? 'anonymous', action: 'sales:processed', siteId: parsed.siteId, saleIds: parsed.saleIds, booked: outcomes.filter((o) => o.result === 'booked').length });
    return reply.send({ sales: outcomes });
  });

  app.get('/inventory/vanished', async (request, reply) => {
    const parsed = parseHeldQuery(request.query as Record<string, string | undefined>);
    if (Array.isArray(parsed)) return reply.code(400).send(invalid('query', parsed));
    try {
      return await reply.send(await options.heldPage(parsed.source, parsed.options));
    } catch (error) {
      if (error instanceof ConfigError) return reply.code(404).send({ error: error.message });
      throw error;
    }
  });

  for (const [path, action, resolve] of [
    ['confirm', 'inventory:vanished:confirm', options.confirmVanished],
    ['keep', 'inventory:vanished:keep', options.keepVanished],
  ] as const) {
    app.post(`/inventory/vanished/${path}`, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const { source, ...rest } = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : { source: undefined };
      const issues: ValidationIssue[] = Object.keys(rest).map((field) => ({ field, value: rest[field], rule: `not a known field${didYouMean(field, ['source'])}` }));
      if (typeof source !== 'string' || source === '') issues.push({ field: 'source', value: source, rule: 'the name of an inventory source' });
      if (issues.length > 0) return reply.code(400).send(invalid('request body', issues));
      try {
        const report = await resolve(source as string);
        audit(options.logger, { user: request.adminUser ?? 'anonymous', action, source, skus: report.confirmed });
        return await reply.send(report);
      } catch (error) {
        if (error instanceof ConfigError) return reply.code(404).send({ error: error.message });
        throw error;
      }
    });
  }
}
