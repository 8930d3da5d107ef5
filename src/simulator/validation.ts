/**
 * The simulator's own checks of inventory payloads, written from the spec's field table and limits. It is
 * deliberately separate from the client's validation so that a client bug is caught here, not shared.
 */
import { formatIssue, type ValidationIssue } from '../errors.js';
import { HttpError, isObject } from './http.js';

type Check = (value: unknown) => string | undefined;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const intRange = (min: number, max: number): Check => (v) => (isInt(v) && v >= min && v <= max ? undefined : `integer ${min} to ${max}`);
const decimalRange = (min: number, max: number): Check => (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? undefined : `number ${min} to ${max}`;
const str: Check = (v) => (typeof v === 'string' ? undefined : 'string');
const strOrNull: Check = (v) => (v === null || typeof v === 'string' ? undefined : 'string or null');
const bool: Check = (v) => (typeof v === 'boolean' ? undefined : 'boolean');
const int: Check = (v) => (isInt(v) ? undefined : 'integer');
const intOrNull: Check = (v) => (v === null || isInt(v) ? undefined : 'integer or null');

const properties: Check = (v) =>
  Array.isArray(v) && v.every((p) => isObject(p) && typeof p.Key === 'string' && typeof p.Value === 'string' && Object.keys(p).length === 2)
    ? undefined
    : 'array of {Key: string, Value: string}';

const warranty: Check = (v) =>
  Array.isArray(v) &&
  v.every(
    (w) =>
      isObject(w) &&
      typeof w.Name === 'string' &&
      typeof w.Price === 'number' &&
      w.Price >= 0 &&
      typeof w.Active === 'boolean' &&
      isInt(w.Cant) &&
      w.Cant >= 0 &&
      typeof w.Code === 'string',
  )
    ? undefined
    : 'array of {Name, Price, Active, Cant, Code}';

/** Every field of the inventory item and its rule (names are case-sensitive, as the spec writes them). */
const ITEM_RULES: Readonly<Record<string, Check>> = {
  InternalId: (v) => (v === 0 ? undefined : 'always 0'),
  Code: (v) => (typeof v === 'string' && v.trim().length > 0 ? undefined : 'non-empty string'),
  Stock: intRange(0, 999_999),
  Price: decimalRange(0.01, 999_999.99),
  OfferPrice: decimalRange(0.01, 999_999.99),
  Taxes: decimalRange(0, 100),
  ForSale: bool,
  Published: bool,
  IsItem: bool,
  ParentItemId: intOrNull,
  ParentItemCode: strOrNull,
  PriceListId: int,
  PriceListCode: strOrNull,
  PriceMode: (v) => (v === 0 || v === null ? undefined : '0 or null'),
  PrecioOriginal: (v) => (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? undefined : 'decimal text such as "1234.50"'),
  DepStock: str,
  Properties: properties,
  Name: str,
  Code2: str,
  ExternalReference: str,
  SiteId: intRange(1, 2_147_483_647),
  ExtendedWarranty: warranty,
};

/** How strict to be: the API demands InternalId 0, the control API ignores it. */
export type ItemCheckMode = 'api' | 'control';

/** The issues of an inventory item payload (empty when valid). */
export function inventoryIssues(body: unknown, mode: ItemCheckMode): ValidationIssue[] {
  if (!isObject(body)) return [{ field: '(body)', value: body, rule: 'a JSON object' }];
  const record = typeof body.Code === 'string' ? body.Code : undefined;
  const issues: ValidationIssue[] = [];
  const required = mode === 'api' ? ['InternalId', 'Code'] : ['Code'];
  for (const field of required) {
    if (!(field in body)) issues.push({ ...(record ? { record } : {}), field, value: undefined, rule: 'required' });
  }
  for (const [field, value] of Object.entries(body)) {
    if (mode === 'control' && field === 'InternalId') continue;
    const check = ITEM_RULES[field];
    const rule = check ? check(value) : 'unknown field (names are case-sensitive)';
    if (rule) issues.push({ ...(record ? { record } : {}), field, value, rule });
  }
  return issues;
}

/** A 400 naming every broken rule. */
export function validationFailure(issues: readonly ValidationIssue[]): HttpError {
  return new HttpError(400, `invalid payload: ${issues.map(formatIssue).join('; ')}`, {
    Errors: issues.map((i) => ({ Field: i.field, Value: i.value ?? null, Rule: i.rule })),
  });
}

/** A required non-empty string field of a user or client body (400 naming it otherwise). */
export function requireString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim() === '') throw new HttpError(400, `${field} is required (a non-empty string)`);
  return value;
}

/** Checks that the fields of a body present in `template` have the template's JSON type (400 otherwise). */
export function checkTypes(body: Record<string, unknown>, template: Record<string, unknown>, what: string): void {
  for (const [field, value] of Object.entries(body)) {
    if (!(field in template)) throw new HttpError(400, `${what}: unknown field ${field} (names are case-sensitive)`);
    const expected = template[field];
    if (value === null || expected === null) continue;
    const ok = Array.isArray(expected) ? Array.isArray(value) : typeof value === typeof expected && (typeof expected !== 'number' || Number.isFinite(value));
    if (!ok) throw new HttpError(400, `${what}: field ${field} must be ${Array.isArray(expected) ? 'an array' : `a ${typeof expected}`}`);
  }
}
