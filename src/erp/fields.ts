/**
 * Field catalogues: the canonical store field names an ERP source may fill, with their types, and
 * `normalizeRecord`, which renames a raw row's columns to those names and coerces the values.
 * Range rules (negative stock, zero price) belong to the flows, which apply the store's validation;
 * here a row is only checked for types and required keys.
 */
import type { ValidationIssue } from '../errors.js';
import {
  ABSENT,
  coerceBoolean,
  coerceInt,
  coerceNumber,
  coerceObjectList,
  coerceProperties,
  coerceString,
  Failure,
} from './coerce.js';

/** How a field's value is coerced. */
export type FieldType = 'string' | 'int' | 'decimal' | 'bool' | 'properties' | 'objectList';

/** One field of a catalogue. */
export interface FieldSpec {
  type: FieldType;
  /** An explicit null from the ERP is kept (it clears the value on the store) instead of dropped. */
  nullable?: boolean;
  /** The record is rejected without it; the first required field names the record in issues. */
  required?: boolean;
  /**
   * An `int` whose fractional values (stock sold by the kg) follow `NormalizeOptions.stockRounding`
   * instead of refusing the row; with `reject` this field alone is refused and the row still flows.
   */
  roundable?: boolean;
}

/** What a fractional `roundable` value becomes (a source's `stockRounding`). */
export type StockRounding = 'floor' | 'round' | 'reject';

/** Canonical field names (store spelling) and their specs. */
export type FieldCatalog = Readonly<Record<string, FieldSpec>>;

/** The column (or mapping target) holding a row's cursor; it is never a field. */
export const CURSOR_COLUMN = 'cursor';

/**
 * The (lower-cased) column a source may return to page rows sharing one cursor by a key unique per row
 * when `Code` is not (one row per item and price list): `:afterKey` is then its value (polling.ts).
 * It is never a field.
 */
export const PAGE_KEY_COLUMN = 'pagekey';

/** Fields of an inventory item an ERP may provide (the store's inventory update payload). */
export const INVENTORY_FIELDS: FieldCatalog = {
  Code: { type: 'string', required: true },
  Stock: { type: 'int', roundable: true },
  Price: { type: 'decimal' },
  OfferPrice: { type: 'decimal' },
  Taxes: { type: 'decimal' },
  ForSale: { type: 'bool' },
  Published: { type: 'bool' },
  IsItem: { type: 'bool' },
  ParentItemId: { type: 'int', nullable: true },
  ParentItemCode: { type: 'string', nullable: true },
  PriceListId: { type: 'int' },
  PriceListCode: { type: 'string', nullable: true },
  PriceMode: { type: 'int', nullable: true },
  PrecioOriginal: { type: 'string' },
  DepStock: { type: 'string' },
  Name: { type: 'string' },
  Code2: { type: 'string' },
  ExternalReference: { type: 'string' },
  SiteId: { type: 'int' },
  Properties: { type: 'properties' },
  ExtendedWarranty: { type: 'objectList' },
  /** Not a store field: units storesync keeps off the store for this SKU (README, "Overselling"). */
  SafetyStock: { type: 'int' },
};

/**
 * Fields of a kit composition row (`inventory.kits`): the kit's code, a component's code, and the
 * quantity of that component in one unit of the kit (decimals allowed: 0.5 kg).
 */
export const KIT_FIELDS: FieldCatalog = {
  kit: { type: 'string', required: true },
  component: { type: 'string' },
  quantity: { type: 'decimal' },
};

/** Fields of a shipment update for a sale (the store's sale update, plus the sale's keys). */
export const FULFILLMENT_FIELDS: FieldCatalog = {
  // Not required here: a row may name the sale by ExternalReference (+ SiteId) instead; the fulfillment
  // producer rejects a row that has neither.
  SaleId: { type: 'int' },
  ExternalReference: { type: 'string' },
  SiteId: { type: 'int' },
  Status: { type: 'int' },
  StatusText: { type: 'string' },
  TrackingCode: { type: 'string' },
  Obeservations: { type: 'string' },
};

/** Options of `normalizeRecord`. */
export interface NormalizeOptions {
  /** Source column → field (or `cursor`), matched case-insensitively; wins over a same-named column. */
  mapping?: Readonly<Record<string, string>>;
  /** Numbers written "1.234,56". */
  decimalComma?: boolean;
  /** Where the row comes from, used to name it in issues when its key is missing or broken. */
  ref: string;
  /** Told about each column that matches no field (sources log each name once). */
  onIgnored?: (column: string) => void;
  /** What a fractional value of a `roundable` field becomes. @defaultValue 'floor' (never more stock than there is) */
  stockRounding?: StockRounding;
}

/**
 * The coerced fields of a good row, or why the row is rejected; either way the row's raw cursor value
 * (the column mapped to `cursor`, else the one named `cursor`), so a rejected row still advances the poll.
 */
export type NormalizeResult =
  | { fields: Record<string, unknown>; cursor: unknown; refused?: ValidationIssue[] }
  | { issues: ValidationIssue[]; cursor: unknown };

/** The rule a fractional value breaks under `stockRounding: reject`. */
export const WHOLE_STOCK_RULE = 'whole number (stockRounding: reject)';

/**
 * A `roundable` field's value: a whole number as `int` reads it, a fractional one rounded as asked (or,
 * under `reject`, a Failure that refuses the field alone); other values as `int` reads them.
 */
function coerceRoundable(value: unknown, decimalComma: boolean, rounding: StockRounding): unknown {
  const number = coerceNumber(value, { decimalComma });
  if (typeof number !== 'number' || Number.isInteger(number)) return coerceInt(value, { decimalComma });
  if (rounding === 'reject') return new Failure(WHOLE_STOCK_RULE);
  const rounded = rounding === 'floor' ? Math.floor(number) : Math.round(number);
  return Number.isSafeInteger(rounded) ? rounded : new Failure('integer');
}

interface ColumnPlan {
  /** Lower-case field name → canonical name. */
  byField: Map<string, string>;
  /** The catalogue's required fields, in its order (the first names a record in issues). */
  required: string[];
  /** Lower-case source column → canonical field or `cursor`. */
  byMapping: Map<string, string>;
}

const EMPTY_MAPPING: Readonly<Record<string, string>> = Object.freeze({});
const plans = new WeakMap<FieldCatalog, WeakMap<object, ColumnPlan>>();

/** Resolves a mapping against a catalogue once; rows reuse the plan. */
function planFor(catalog: FieldCatalog, mapping: Readonly<Record<string, string>>): ColumnPlan {
  let byMappingObject = plans.get(catalog);
  if (!byMappingObject) plans.set(catalog, (byMappingObject = new WeakMap()));
  let plan = byMappingObject.get(mapping);
  if (!plan) {
    const byField = new Map(Object.keys(catalog).map((name) => [name.toLowerCase(), name]));
    const byMapping = new Map<string, string>();
    for (const [column, target] of Object.entries(mapping)) {
      const canonical = target.toLowerCase() === CURSOR_COLUMN ? CURSOR_COLUMN : byField.get(target.toLowerCase());
      if (canonical) byMapping.set(column.toLowerCase(), canonical);
    }
    const required = Object.entries(catalog).flatMap(([field, spec]) => (spec.required ? [field] : []));
    plan = { byField, byMapping, required };
    byMappingObject.set(mapping, plan);
  }
  return plan;
}

/** Mapping targets that are neither a field of the catalogue nor `cursor` (a configuration mistake). */
export function unknownMappingTargets(catalog: FieldCatalog, mapping: Readonly<Record<string, string>>): string[] {
  const known = new Set([CURSOR_COLUMN, ...Object.keys(catalog).map((name) => name.toLowerCase())]);
  return Object.values(mapping).filter((target) => !known.has(target.toLowerCase()));
}

function coerce(spec: FieldSpec, value: unknown, decimalComma: boolean): unknown {
  if (value === null && spec.nullable) return null;
  switch (spec.type) {
    case 'string':
      return coerceString(value);
    case 'int':
      return coerceInt(value, { decimalComma });
    case 'decimal':
      return coerceNumber(value, { decimalComma });
    case 'bool':
      return coerceBoolean(value);
    case 'properties':
      return coerceProperties(value);
    case 'objectList':
      return coerceObjectList(value);
  }
}

/**
 * The raw value of a row's key (the catalogue's first required field), found as `normalizeRecord` finds
 * it (a mapped column wins over a same-named one), without coercing the row: what a source pages by.
 */
export function rawKeyOf(raw: Readonly<Record<string, unknown>>, catalog: FieldCatalog, mapping: Readonly<Record<string, string>>): unknown {
  const plan = planFor(catalog, mapping);
  const key = plan.required[0];
  if (key === undefined) return undefined;
  let value: unknown;
  for (const column of Object.keys(raw)) {
    const lower = column.toLowerCase();
    const mapped = plan.byMapping.get(lower);
    if (mapped === key) return raw[column];
    if (mapped === undefined && plan.byField.get(lower) === key) value = raw[column];
  }
  return value;
}

/**
 * Renames a raw row's columns to catalogue fields (case-insensitively, or through `mapping`) and
 * coerces each value. Unknown columns are ignored, blank values are left out (only present fields are
 * carried), and a value that cannot be coerced or a missing required field rejects the row.
 */
export function normalizeRecord(raw: Record<string, unknown>, catalog: FieldCatalog, options: NormalizeOptions): NormalizeResult {
  const plan = planFor(catalog, options.mapping ?? EMPTY_MAPPING);
  const decimalComma = options.decimalComma ?? false;
  const values = new Map<string, { value: unknown; explicit: boolean }>();
  for (const column of Object.keys(raw)) {
    const value = raw[column];
    const lower = column.toLowerCase();
    const mapped = plan.byMapping.get(lower);
    const field = mapped ?? plan.byField.get(lower) ?? (lower === CURSOR_COLUMN ? CURSOR_COLUMN : undefined);
    if (field === undefined && lower === PAGE_KEY_COLUMN) continue;
    if (field === undefined) {
      options.onIgnored?.(column);
      continue;
    }
    // An explicitly mapped column wins over a column that merely shares the field's name.
    if (values.get(field)?.explicit && mapped === undefined) continue;
    values.set(field, { value, explicit: mapped !== undefined });
  }

  const cursor = values.get(CURSOR_COLUMN)?.value;
  values.delete(CURSOR_COLUMN);
  const fields: Record<string, unknown> = {};
  const broken: { field: string; value: unknown; rule: string }[] = [];
  const refused: { field: string; value: unknown; rule: string }[] = [];
  const rounding = options.stockRounding ?? 'floor';
  for (const [field, { value }] of values) {
    const spec = catalog[field] as FieldSpec;
    const result = spec.roundable && spec.type === 'int' && value !== null ? coerceRoundable(value, decimalComma, rounding) : coerce(spec, value, decimalComma);
    if (result instanceof Failure && result.rule === WHOLE_STOCK_RULE) refused.push({ field, value, rule: result.rule });
    else if (result instanceof Failure) broken.push({ field, value, rule: result.rule });
    else if (result !== ABSENT) fields[field] = result;
  }
  const { required } = plan;
  for (const field of required) {
    if (fields[field] === undefined && !broken.some((issue) => issue.field === field)) {
      broken.push({ field, value: values.get(field)?.value, rule: 'required' });
    }
  }
  const key = required[0] === undefined ? undefined : fields[required[0]];
  const record = key === undefined || key === null ? options.ref : String(key);
  if (broken.length === 0) return refused.length === 0 ? { fields, cursor } : { fields, cursor, refused: refused.map((issue) => ({ record, ...issue })) };
  return { issues: [...broken, ...refused].map((issue) => ({ record, ...issue })), cursor };
}
