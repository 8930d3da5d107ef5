/**
 * Inventory: query (`/Api/Inventory/Get` and `/Api/inventory`), partial update by Code (PUT, mode=default)
 * and creation (POST, Code unique, optional fields defaulted).
 */
import { HttpError } from '../http.js';
import type { Route, RouteReply, RouteRequest } from '../router.js';
import type { ItemInput, SimItem } from '../types.js';
import { inventoryIssues, validationFailure } from '../validation.js';
import { loosenItem, malformItem } from '../variance.js';
import { type SimContext, successFalse } from './context.js';

/** The fields of a write as logged: everything sent except the key fields. */
function writtenFields(body: Record<string, unknown>): Record<string, unknown> {
  const { InternalId: _id, Code: _code, ...fields } = body;
  return fields;
}

function query(ctx: SimContext, { query: q }: RouteRequest): RouteReply {
  const code = q.get('code');
  const priceListId = q.int('pricelistId');
  const siteId = q.int('siteId');
  const id = q.int('id') ?? q.int('itemId');
  const withPreferences = q.bool('includePreferences') ?? false;
  const { prices } = ctx.state;
  // Price lists: every item answers with the prices of the list asked for (400 on an unknown one).
  const list = prices?.listOfQuery(priceListId);
  const out: unknown[] = [];
  for (const { item, meta } of ctx.state.heldItems(siteId, code)) {
    if (!list && priceListId !== undefined && item.PriceListId !== priceListId) continue;
    if (siteId !== undefined && item.SiteId !== siteId) continue;
    if (id !== undefined && item.InternalId !== id) continue;
    const record = presentItem(ctx, prices && list ? prices.view(item, list) : item);
    out.push(withPreferences ? { ...record, Preferences: meta.preferences } : record);
  }
  return { status: 200, body: out };
}

/** The item as this store sends it: loosely typed and/or malformed when the variance settings say so. */
function presentItem(ctx: SimContext, item: SimItem): object {
  const { looseTypes, malformedItemCodes } = ctx.faults.current;
  if (!looseTypes && !malformedItemCodes.includes(item.Code)) return item;
  const record = looseTypes ? loosenItem(item) : { ...item };
  return malformedItemCodes.includes(item.Code) ? malformItem(record) : record;
}

async function update(ctx: SimContext, req: RouteRequest): Promise<RouteReply> {
  const mode = req.query.get('mode');
  if (mode !== 'default') throw new HttpError(400, `query parameter mode must be "default" (got ${mode ?? 'none'})`);
  const body = await req.body();
  const issues = inventoryIssues(body, 'api');
  if (issues.length > 0) throw validationFailure(issues);
  const input = body as ItemInput;
  failingItem(ctx, input.Code);
  if (!ctx.state.itemOn(input.Code, input.SiteId)) {
    const onSite = ctx.state.siteItems && ctx.state.items.has(input.Code) ? ` on site ${String(input.SiteId)}` : '';
    throw new HttpError(404, `Product not found: ${input.Code}${onSite}`);
  }
  // Checked before a {Success:false} is drawn: a bad request is refused whatever the store's mood.
  ctx.state.prices?.listOfWrite(input.Code, input.PriceListId, input.PriceListCode);
  const refused = successFalse(ctx);
  if (refused) return refused;
  const fields = writtenFields(input);
  ctx.state.updateItem(input.Code, fields);
  ctx.events.emit('inventory:write', ctx.state.logWrite(input.Code, 'update', fields, req.now));
  return { status: 200, body: { Success: true, Message: `Item ${input.Code} updated` } };
}

async function create(ctx: SimContext, req: RouteRequest): Promise<RouteReply> {
  const mode = req.query.get('mode');
  if (mode !== undefined && mode !== 'default') throw new HttpError(400, `query parameter mode must be "default" (got ${mode})`);
  const body = await req.body();
  const issues = inventoryIssues(body, 'api');
  if (issues.length > 0) throw validationFailure(issues);
  const input = body as ItemInput;
  failingItem(ctx, input.Code);
  if (ctx.state.items.has(input.Code)) throw new HttpError(409, `Code already exists: ${input.Code}`);
  ctx.state.prices?.listOfWrite(input.Code, input.PriceListId, input.PriceListCode);
  const refused = successFalse(ctx);
  if (refused) return refused;
  const item = ctx.state.createItem(input, req.now);
  ctx.events.emit('inventory:write', ctx.state.logWrite(input.Code, 'create', writtenFields(input), req.now));
  return { status: 200, body: { Success: true, Message: `Item ${item.Code} created`, InternalId: item.InternalId } };
}

/** The inventory routes; item creation is POSTed to `createPath` (the spec names the operation, not its path). */
export function inventoryRoutes(ctx: SimContext, createPath = '/Api/Inventory'): Route[] {
  return [
    { method: 'GET', template: '/Api/Inventory/Get', handle: (req) => query(ctx, req) },
    { method: 'GET', template: '/Api/Inventory', handle: (req) => query(ctx, req) },
    { method: 'PUT', template: '/Api/Inventory', handle: (req) => update(ctx, req) },
    { method: 'POST', template: createPath, handle: (req) => create(ctx, req) },
  ];
}

/** `failingItemCodes`: a write of one of these codes fails as a server error, whatever it holds. */
function failingItem(ctx: SimContext, code: string): void {
  if (ctx.faults.current.failingItemCodes.includes(code)) throw new HttpError(500, `Internal error while saving ${code}`);
}
