/** Sales: listing with every filter of the spec, a sale by id, and the sale update. */
import { formatStoreDate, nextDay } from '../clock.js';
import { HttpError, isObject } from '../http.js';
import { fold } from '../people.js';
import type { Query, Route, RouteReply, RouteRequest } from '../router.js';
import type { StoredSale } from '../sale-generator.js';
import type { Sale } from '../types.js';
import { loosenSale, malformSale } from '../variance.js';
import { SALE_STATUSES } from '../vocabulary.js';
import { type SimContext, successFalse } from './context.js';

/** Fields a sale update applies; any other sale field in the payload is accepted and left unchanged. */
const UPDATABLE: Readonly<Record<string, 'number' | 'string'>> = {
  Status: 'number',
  StatusText: 'string',
  OperationStatus: 'number',
  TrackingCode: 'string',
  Obeservations: 'string',
  Message: 'string',
};

const digits = (text: string): string => text.replace(/\D/g, '');

/**
 * Under `replacingSalePut`, the update fields the body left out, at the value a .NET service binds to a
 * missing property: 0 for integers (so a missing Status becomes 0, Pending), '' for texts.
 */
function emptied(received: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, type] of Object.entries(UPDATABLE)) {
    if (!(field in received)) out[field] = type === 'number' ? 0 : '';
  }
  return out;
}

/** Builds the predicate of the sale list from the query (400 on a malformed parameter). */
function saleFilter(ctx: SimContext, q: Query): (s: StoredSale) => boolean {
  const statuses = q.list('status').map((v) => {
    if (!/^-?\d+$/.test(v)) throw new HttpError(400, `query parameter status must be integers separated by commas (got ${v})`);
    return Number(v);
  });
  const from = q.date('from', ctx.timeZone);
  const toDay = q.date('to', ctx.timeZone);
  // `to` names a day: the whole day is included.
  const toExclusive = toDay === undefined ? undefined : nextDay(toDay, ctx.timeZone);
  const reference = q.get('external_reference');
  const subStatus = q.int('subStatus');
  const payMethodId = q.int('payMethodId');
  const askedSite = q.int('siteId');
  // `ignoreSaleSiteFilter`: the parameter is still checked, then not applied.
  const siteId = ctx.faults.current.ignoreSaleSiteFilter ? undefined : askedSite;
  const email = q.get('email')?.toLowerCase();
  const idNumber = q.get('identification_number');
  const phone = q.get('last_digits_phone');
  if (phone !== undefined && !/^\d+$/.test(phone)) throw new HttpError(400, `query parameter last_digits_phone must be digits (got ${phone})`);
  const postal = q.int('postal_code');
  const fullName = q.get('full_name');
  const nameNeedle = fullName === undefined ? undefined : fold(fullName);
  return ({ sale, createdAtMs }) => {
    const u = sale.UserData;
    if (statuses.length > 0 && !statuses.includes(sale.Status)) return false;
    if (from !== undefined && createdAtMs < from) return false;
    if (toExclusive !== undefined && createdAtMs >= toExclusive) return false;
    if (reference !== undefined && sale.ExternalReference !== reference) return false;
    if (subStatus !== undefined && sale.SubStatus !== subStatus) return false;
    if (payMethodId !== undefined && sale.PayMethodId !== payMethodId) return false;
    if (siteId !== undefined && sale.SiteId !== siteId) return false;
    if (email !== undefined && u.EMail.toLowerCase() !== email) return false;
    if (idNumber !== undefined && u.IdNumber !== idNumber && sale.BillingAddress.IdNumber !== idNumber) return false;
    if (phone !== undefined && ![u.Phone, u.Mobile, sale.SearchPhone].some((p) => digits(p).endsWith(phone))) return false;
    if (postal !== undefined && ![u.PostalCode, sale.ShippingAddress.PostalCode, sale.BillingAddress.PostalCode].includes(String(postal))) {
      return false;
    }
    if (nameNeedle !== undefined && !fold(`${u.FirstName} ${u.LastName}`).includes(nameNeedle)) return false;
    return true;
  };
}

function list(ctx: SimContext, { query: q }: RouteRequest): RouteReply {
  const limit = q.int('limit');
  const offset = q.int('offset');
  if ((limit !== undefined && limit < 0) || (offset !== undefined && offset < 0)) {
    throw new HttpError(400, 'limit and offset must not be negative');
  }
  const siteId = q.int('siteId');
  if (siteId !== undefined && ctx.faults.current.failingSaleSiteIds.includes(siteId)) {
    throw new HttpError(500, `Internal error while listing the sales of site ${siteId}`);
  }
  const matches = ctx.state.sales.filter(saleFilter(ctx, q));
  const { ignoreOffset, saleLimitCap } = ctx.faults.current;
  const start = ignoreOffset ? 0 : (offset ?? 0);
  // A capped store answers at most `saleLimitCap` sales whatever `limit` asks (and with no `limit`).
  const asked = limit ?? Number.POSITIVE_INFINITY;
  const size = saleLimitCap > 0 ? Math.min(asked, saleLimitCap) : asked;
  const page = matches.slice(start, Number.isFinite(size) ? start + size : undefined);
  return { status: 200, body: page.map((s) => presentSale(ctx, s.sale)) };
}

/** The sale as this store sends it: loosely typed and/or malformed when the variance settings say so. */
function presentSale(ctx: SimContext, sale: Sale): unknown {
  const { looseTypes, malformedSaleIds } = ctx.faults.current;
  if (!looseTypes && !malformedSaleIds.includes(sale.Id)) return sale;
  const record = looseTypes ? loosenSale(sale) : { ...sale };
  return malformedSaleIds.includes(sale.Id) ? malformSale(record) : record;
}

function saleById(ctx: SimContext, id: number | undefined): StoredSale {
  const stored = id === undefined ? undefined : ctx.state.salesById.get(id);
  if (!stored) throw new HttpError(404, `Sale not found: ${id}`);
  return stored;
}

function get(ctx: SimContext, req: RouteRequest): RouteReply {
  // from/to are listed for this endpoint with no stated meaning: checked, then not applied.
  req.query.date('from', ctx.timeZone);
  req.query.date('to', ctx.timeZone);
  return { status: 200, body: presentSale(ctx, saleById(ctx, req.params.id).sale) };
}

async function update(ctx: SimContext, req: RouteRequest): Promise<RouteReply> {
  const stored = saleById(ctx, req.params.id);
  const body = await req.body();
  if (!isObject(body)) throw new HttpError(400, 'the sale update must be a JSON object');
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    if (field === 'Id') {
      if (value !== stored.sale.Id) throw new HttpError(400, `Id ${String(value)} does not match the sale ${stored.sale.Id} in the path`);
      continue;
    }
    if (!(field in stored.sale)) throw new HttpError(400, `unknown sale field ${field} (names are case-sensitive; note "Obeservations")`);
    const type = UPDATABLE[field];
    if (type === undefined) continue;
    if (typeof value !== type || (type === 'number' && !Number.isInteger(value))) {
      throw new HttpError(400, `field ${field} must be ${type === 'number' ? 'an integer' : 'a string'}`);
    }
    fields[field] = value;
  }
  const refused = successFalse(ctx);
  if (refused) return refused;
  const sale: Sale = stored.sale;
  const previousStatus = sale.Status;
  const replacing = ctx.faults.current.replacingSalePut;
  if (replacing) Object.assign(sale, emptied(fields));
  Object.assign(sale, fields);
  ctx.state.changeSaleStatus(sale, previousStatus);
  if (!replacing && fields.Status !== undefined && fields.StatusText === undefined) {
    sale.StatusText = SALE_STATUSES.find((s) => s.status === sale.Status)?.text ?? sale.StatusText;
  }
  sale.ModificationDate = formatStoreDate(req.now, ctx.timeZone);
  ctx.events.emit('sale:update', ctx.state.logSaleUpdate(sale.Id, fields, req.now));
  return { status: 200, body: sale };
}

/** The sale routes. */
export function saleRoutes(ctx: SimContext): Route[] {
  return [
    { method: 'GET', template: '/Api/Sale', handle: (req) => list(ctx, req) },
    { method: 'GET', template: '/Api/Sale/{id}', handle: (req) => get(ctx, req) },
    { method: 'PUT', template: '/Api/Sale/{id}', handle: (req) => update(ctx, req) },
  ];
}
