/**
 * `GET /Api/product`: the spec shows the query but not the record, so each inventory item is projected
 * as a `Product`. `filtersand` / `filtersor` take `Field:value` pairs separated by commas, matched
 * case-insensitively on the field's text; `mode` is accepted and not applied.
 */
import { formatStoreDate, nextDay } from '../clock.js';
import { HttpError } from '../http.js';
import type { StoredItem } from '../items.js';
import { fold } from '../people.js';
import type { Route, RouteReply, RouteRequest } from '../router.js';
import type { Product } from '../types.js';
import type { SimContext } from './context.js';

const PRODUCT_FIELDS: readonly (keyof Product)[] = [
  'Id', 'Code', 'Name', 'ParentId', 'IsItem', 'Status', 'Price', 'Stock', 'SiteId', 'Brand', 'Category', 'CreationDate',
];

/** The product field named `name` in any letter case (400 when there is none). */
function productField(name: string, param: string): keyof Product {
  const field = PRODUCT_FIELDS.find((f) => f.toLowerCase() === name.trim().toLowerCase());
  if (!field) throw new HttpError(400, `${param}: unknown product field ${name} (known: ${PRODUCT_FIELDS.join(', ')})`);
  return field;
}

function toProduct({ item, meta }: StoredItem, timeZone: string): Product {
  return {
    Id: item.InternalId,
    Code: item.Code,
    Name: item.Name,
    ParentId: item.ParentItemId,
    IsItem: item.IsItem,
    Status: item.Published ? 'active' : 'inactive',
    Price: item.Price,
    Stock: item.Stock,
    SiteId: item.SiteId,
    Brand: meta.brand,
    Category: meta.category,
    CreationDate: formatStoreDate(meta.createdAtMs, timeZone),
  };
}

/** `Field:value,Field:value` → predicates. */
function fieldFilters(text: string | undefined, param: string): Array<(p: Product) => boolean> {
  if (text === undefined) return [];
  return text.split(',').filter((pair) => pair.trim() !== '').map((pair) => {
    const at = pair.indexOf(':');
    if (at < 1) throw new HttpError(400, `${param} must be Field:value pairs separated by commas (got ${pair})`);
    const field = productField(pair.slice(0, at), param);
    const wanted = pair.slice(at + 1).trim().toLowerCase();
    return (p: Product) => String(p[field]).toLowerCase() === wanted;
  });
}

function list(ctx: SimContext, req: RouteRequest): RouteReply {
  const q = req.query;
  const term = q.get('term');
  const needle = term === undefined ? undefined : fold(term);
  const parentId = q.int('parentId');
  const statuses = q.list('status').map((s) => s.toLowerCase());
  const from = q.date('creationDateFrom', ctx.timeZone);
  const toDay = q.date('creationDateTo', ctx.timeZone);
  const toExclusive = toDay === undefined ? undefined : nextDay(toDay, ctx.timeZone);
  const all = fieldFilters(q.get('filtersand'), 'filtersand');
  const any = fieldFilters(q.get('filtersor'), 'filtersor');
  const order = productField(q.get('order') ?? 'Id', 'order');
  const ascending = q.bool('ascending') ?? true;
  const fields = q.list('fields').map((f) => productField(f, 'fields'));

  const out: Array<{ product: Product; key: number | string }> = [];
  for (const stored of ctx.state.items.values()) {
    const { item, meta } = stored;
    if (parentId !== undefined && item.ParentItemId !== parentId) continue;
    if (from !== undefined && meta.createdAtMs < from) continue;
    if (toExclusive !== undefined && meta.createdAtMs >= toExclusive) continue;
    if (needle !== undefined && !fold(item.Name).includes(needle) && !fold(item.Code).includes(needle)) continue;
    const product = toProduct(stored, ctx.timeZone);
    if (statuses.length > 0 && !statuses.includes(product.Status)) continue;
    if (!all.every((f) => f(product))) continue;
    if (any.length > 0 && !any.some((f) => f(product))) continue;
    // CreationDate text (MM/DD/YYYY) does not sort chronologically: its key is the instant.
    out.push({ product, key: order === 'CreationDate' ? meta.createdAtMs : sortKey(product[order]) });
  }
  const sign = ascending ? 1 : -1;
  out.sort((a, b) => sign * (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const products = out.map((entry) => entry.product);
  if (fields.length === 0) return { status: 200, body: products };
  return { status: 200, body: products.map((p) => Object.fromEntries(fields.map((f) => [f, p[f]]))) };
}

/** A key that sorts with `<`: numbers as they are, text folded (accents and case ignored), null first. */
function sortKey(value: unknown): number | string {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === null || value === undefined) return Number.NEGATIVE_INFINITY;
  return fold(String(value));
}

/** The product route. */
export function productRoutes(ctx: SimContext): Route[] {
  return [{ method: 'GET', template: '/Api/product', handle: (req) => list(ctx, req) }];
}
