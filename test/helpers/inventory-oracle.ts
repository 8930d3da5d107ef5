/**
 * An independent reading of the spec's inventory update rules, written from store-api-spec.md without
 * the project's schemas, so the security tests check the validation instead of repeating it.
 */

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v);
const inRange = (v: unknown, min: number, max: number): boolean => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;

/** Rules per field of the spec's "Inventory item" table (the fields this oracle knows). */
const RULES: Record<string, (v: unknown) => boolean> = {
  InternalId: (v) => v === 0,
  Code: (v) => typeof v === 'string' && v.trim() !== '',
  Stock: (v) => isInt(v) && inRange(v, 0, 999999),
  Price: (v) => inRange(v, 0.01, 999999.99),
  OfferPrice: (v) => inRange(v, 0.01, 999999.99),
  Taxes: (v) => inRange(v, 0, 100),
  ForSale: (v) => typeof v === 'boolean',
  Published: (v) => typeof v === 'boolean',
  IsItem: (v) => typeof v === 'boolean',
  PriceMode: (v) => v === 0 || v === null,
  DepStock: (v) => typeof v === 'string',
  PrecioOriginal: (v) => typeof v === 'string',
  Name: (v) => typeof v === 'string',
  SiteId: (v) => isInt(v),
  PriceListId: (v) => isInt(v),
};

/** Names of the fields of `body` that break the spec (Code is required). */
export function specViolations(body: unknown): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return ['(body)'];
  const record = body as Record<string, unknown>;
  const broken = Object.entries(RULES)
    .filter(([field]) => field in record)
    .filter(([field, ok]) => !ok(record[field]))
    .map(([field]) => field);
  if (!('Code' in record)) broken.push('Code');
  return broken;
}
