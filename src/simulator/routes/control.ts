/**
 * The control API under `/__control/`: the programmatic API over HTTP for out-of-process users
 * (benchmarks, the demo). No hash, no faults; bodies are JSON with or without a Content-Type.
 */
import { ZodError } from 'zod';

import { HttpError, isObject } from '../http.js';
import type { Route, RouteRequest } from '../router.js';
import type { SaleInput } from '../state.js';
import type { ItemInput } from '../types.js';
import { inventoryIssues, validationFailure } from '../validation.js';
import type { SimContext } from './context.js';

/** Operations of the simulator facade that the control API exposes. */
export interface ControlOps {
  reset(): void;
  expireHashes(): number;
}

function since(req: RouteRequest): number {
  return req.query.int('since') ?? 0;
}

/** Index of the first entry with seq > `after` (entries are in seq order). */
function firstAfter(entries: ReadonlyArray<{ seq: number }>, after: number): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((entries[mid] as { seq: number }).seq <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Checks a bulk item body: an array of items, each with a Code and valid fields (InternalId ignored). */
function itemInputs(body: unknown): ItemInput[] {
  const list = isObject(body) && Array.isArray(body.items) ? body.items : body;
  if (!Array.isArray(list)) throw new HttpError(400, 'expected an array of items (or {items: [...]})');
  const issues = list.flatMap((item) => inventoryIssues(item, 'control'));
  if (issues.length > 0) throw validationFailure(issues.slice(0, 50));
  return list as ItemInput[];
}

/** The control routes. */
export function controlRoutes(ctx: SimContext, ops: ControlOps): Route[] {
  const { state, faults, counters } = ctx;
  return [
    {
      method: 'GET',
      template: '/__control',
      handle: () => ({
        status: 200,
        body: { items: state.items.size, sales: state.sales.length, users: state.users.size, clients: state.clients.size, hashes: state.hashes.size },
      }),
    },
    { method: 'GET', template: '/__control/faults', handle: () => ({ status: 200, body: faults.current }) },
    {
      method: 'POST',
      template: '/__control/faults',
      async handle(req) {
        try {
          return { status: 200, body: faults.set((await req.body()) as Record<string, never>) };
        } catch (error) {
          if (error instanceof ZodError) throw new HttpError(400, `invalid faults: ${error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}`);
          throw error;
        }
      },
    },
    { method: 'GET', template: '/__control/counters', handle: () => ({ status: 200, body: counters.snapshot() }) },
    {
      method: 'POST',
      template: '/__control/counters/reset',
      handle: () => {
        counters.reset();
        return { status: 200, body: { Success: true } };
      },
    },
    { method: 'GET', template: '/__control/writes', handle: (req) => ({ status: 200, body: state.writes.slice(firstAfter(state.writes, since(req))) }) },
    {
      method: 'GET',
      template: '/__control/sale-updates',
      handle: (req) => ({ status: 200, body: state.saleUpdates.slice(firstAfter(state.saleUpdates, since(req))) }),
    },
    { method: 'GET', template: '/__control/sales', handle: () => ({ status: 200, body: state.sales.map((s) => s.sale) }) },
    {
      method: 'POST',
      template: '/__control/sales',
      async handle(req) {
        const body = await req.body();
        if (!isObject(body)) throw new HttpError(400, 'expected a (partial) sale object');
        return { status: 200, body: state.addSale(body as SaleInput, req.now) };
      },
    },
    {
      method: 'GET',
      template: '/__control/items',
      handle: (req) => {
        // Items per site: `siteId` reads that site's copies (without it, every site's); price lists:
        // `pricelistId` shows that list's prices (without it, the default list's). Never loosened.
        const siteId = req.query.int('siteId');
        const list = state.prices?.listOfQuery(req.query.int('pricelistId'));
        const stored = [...state.heldItems(siteId, req.query.get('code'))].filter((s) => siteId === undefined || s.item.SiteId === siteId);
        return { status: 200, body: stored.map((s) => (state.prices && list ? state.prices.view(s.item, list) : s.item)) };
      },
    },
    {
      method: 'GET',
      template: '/__control/price-lists',
      handle: () => ({ status: 200, body: state.prices?.lists ?? [] }),
    },
    {
      method: 'PUT',
      template: '/__control/items',
      async handle(req) {
        const items = itemInputs(await req.body());
        if (req.query.bool('replace')) state.setItems(items);
        else for (const item of items) state.upsertItem(item);
        return { status: 200, body: { Success: true, upserted: items.length, total: state.items.size } };
      },
    },
    {
      method: 'POST',
      template: '/__control/reset',
      handle: () => {
        ops.reset();
        return { status: 200, body: { Success: true } };
      },
    },
    {
      method: 'POST',
      template: '/__control/expire-hashes',
      handle: () => ({ status: 200, body: { Success: true, expired: ops.expireHashes() } }),
    },
  ];
}
