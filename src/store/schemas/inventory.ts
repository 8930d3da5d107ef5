/** Schemas of the inventory item: as the query returns it, and as an update must be written. */
import { z } from 'zod';

import { bool, int, looseString, num, numberOrObject, rule, str, stringOrObject } from './fields.js';

/** A custom attribute of an inventory item. */
export const propertySchema = z.looseObject({ Key: looseString, Value: looseString.nullable() });

/** An extended warranty offered with an inventory item. */
export const extendedWarrantySchema = z.looseObject({
  Name: str,
  Price: num,
  Active: bool,
  Cant: int,
  Code: str,
});

/** An inventory item as the inventory query returns it. `Code` is the key. */
export const inventoryItemSchema = z.looseObject({
  InternalId: int,
  Code: looseString.refine((code) => code.trim() !== '', rule('required non-empty string')),
  Stock: num,
  Price: num,
  OfferPrice: num,
  Taxes: numberOrObject,
  ForSale: bool,
  Published: bool,
  IsItem: bool,
  ParentItemId: int,
  ParentItemCode: str,
  PriceListId: int,
  PriceListCode: str,
  PriceMode: int,
  PrecioOriginal: z.union([z.string(), z.number()]).nullish(),
  DepStock: stringOrObject,
  Properties: z.array(propertySchema).nullish(),
  Name: str,
  Code2: str,
  ExternalReference: str,
  SiteId: int,
  // The query endpoint's listing types it as "null or object", the field reference as an array.
  ExtendedWarranty: z.unknown().optional(),
});
export type InventoryItem = z.infer<typeof inventoryItemSchema>;

const absent = (value: unknown): boolean => value === undefined || value === null;
const isInteger = (value: unknown): boolean => absent(value) || Number.isSafeInteger(value);
const isNumber = (value: unknown): boolean => absent(value) || (typeof value === 'number' && Number.isFinite(value));
const isText = (value: unknown): boolean => absent(value) || typeof value === 'string';
const isFlag = (value: unknown): boolean => absent(value) || typeof value === 'boolean';
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isProperty = (value: unknown): boolean => isRecord(value) && typeof value.Key === 'string' && (value.Value === null || typeof value.Value === 'string');

/**
 * Per field of `inventoryItemSchema`, the values it takes exactly as sent: already of the field's own
 * type (a number as a number, not as text), so that parsing would change nothing. Any other value goes
 * through the schema, which reads it or says what is wrong. `test/store/schemas/inventory.test.ts`
 * keeps this table and the schema in step.
 */
export const INVENTORY_ITEM_AS_SENT: Readonly<Record<keyof typeof inventoryItemSchema.shape, (value: unknown) => boolean>> = {
  InternalId: isInteger,
  Code: (value) => typeof value === 'string' && value.trim() !== '',
  Stock: isNumber,
  Price: isNumber,
  OfferPrice: isNumber,
  Taxes: isNumber,
  ForSale: isFlag,
  Published: isFlag,
  IsItem: isFlag,
  ParentItemId: isInteger,
  ParentItemCode: isText,
  PriceListId: isInteger,
  PriceListCode: isText,
  PriceMode: isInteger,
  PrecioOriginal: (value) => isText(value) || isNumber(value),
  DepStock: isText,
  Properties: (value) => absent(value) || (Array.isArray(value) && value.every(isProperty)),
  Name: isText,
  Code2: isText,
  ExternalReference: isText,
  SiteId: isInteger,
  ExtendedWarranty: () => true,
};
const AS_SENT = Object.entries(INVENTORY_ITEM_AS_SENT);

/**
 * True when `raw` is an inventory item whose every field is already of its own type, so that
 * `inventoryItemSchema` would take it unchanged: a reader of 100,000 items skips the schema's work for
 * them (several times the cost of this check). False says nothing: parse with the schema.
 */
export function isInventoryItemAsSent(raw: unknown): raw is InventoryItem {
  if (!isRecord(raw)) return false;
  for (const [field, fits] of AS_SENT) if (!fits(raw[field])) return false;
  return true;
}

/** The rules of the spec's Limits table, worded as they appear in a ValidationError. */
export const INVENTORY_RULES = {
  InternalId: 'always 0',
  Code: 'required non-empty string',
  CodeSpaces: 'no spaces before or after (the Code is the key of the item)',
  PrecioOriginal: 'a decimal written as text, such as "1234.50"',
  Stock: 'integer 0 to 999999',
  Price: 'number 0.01 to 999999.99 with at most 2 decimals',
  Taxes: 'percentage 0 to 100',
  boolean: 'true or false',
  PriceMode: '0 or null',
  positiveInt: 'positive integer',
  string: 'string',
  nullableString: 'string or null',
  nullableInt: 'integer or null',
  Properties: 'array of {Key, Value} strings',
  ExtendedWarranty: 'array of {Name, Price, Active, Cant, Code}',
} as const;

function hasAtMostTwoDecimals(value: number): boolean {
  return Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
}

const money = z
  .number(rule(INVENTORY_RULES.Price))
  .min(0.01, rule(INVENTORY_RULES.Price))
  .max(999999.99, rule(INVENTORY_RULES.Price))
  .refine(hasAtMostTwoDecimals, rule(INVENTORY_RULES.Price));
const flag = z.boolean(rule(INVENTORY_RULES.boolean));
const positiveId = z.number(rule(INVENTORY_RULES.positiveInt)).int(rule(INVENTORY_RULES.positiveInt)).positive(rule(INVENTORY_RULES.positiveInt));
const text = z.string(rule(INVENTORY_RULES.string));

/**
 * The body of an inventory update or creation, with the spec's rules. Only `Code` is required; fields
 * left out stay unchanged on the store. `InternalId` is always sent as 0 (the client sets it). Unknown
 * fields are refused: a misspelt field would otherwise be ignored by the store without a word.
 */
export const inventoryUpdateSchema = z.strictObject({
  InternalId: z.literal(0, rule(INVENTORY_RULES.InternalId)).optional(),
  // Refused rather than trimmed: the Code is the key, and sending " SKU-1" trimmed would update an item
  // other than the one the caller (or its Redis state) names.
  Code: z
    .string(rule(INVENTORY_RULES.Code))
    .refine((code) => code.trim() !== '', rule(INVENTORY_RULES.Code))
    .refine((code) => code.trim() === '' || code === code.trim(), rule(INVENTORY_RULES.CodeSpaces)),
  Stock: z
    .number(rule(INVENTORY_RULES.Stock))
    .int(rule(INVENTORY_RULES.Stock))
    .min(0, rule(INVENTORY_RULES.Stock))
    .max(999999, rule(INVENTORY_RULES.Stock))
    .optional(),
  Price: money.optional(),
  OfferPrice: money.optional(),
  Taxes: z.number(rule(INVENTORY_RULES.Taxes)).min(0, rule(INVENTORY_RULES.Taxes)).max(100, rule(INVENTORY_RULES.Taxes)).optional(),
  ForSale: flag.optional(),
  Published: flag.optional(),
  IsItem: flag.optional(),
  ParentItemId: z.number(rule(INVENTORY_RULES.nullableInt)).int(rule(INVENTORY_RULES.nullableInt)).nullable().optional(),
  ParentItemCode: z.string(rule(INVENTORY_RULES.nullableString)).nullable().optional(),
  PriceListId: positiveId.optional(),
  PriceListCode: z.string(rule(INVENTORY_RULES.nullableString)).nullable().optional(),
  PriceMode: z.literal(0, rule(INVENTORY_RULES.PriceMode)).nullable().optional(),
  PrecioOriginal: z.string(rule(INVENTORY_RULES.PrecioOriginal)).regex(/^\d{1,9}(\.\d{1,6})?$/, rule(INVENTORY_RULES.PrecioOriginal)).optional(),
  DepStock: text.optional(),
  Properties: z
    .array(z.object({ Key: z.string(), Value: z.string() }), rule(INVENTORY_RULES.Properties))
    .optional(),
  Name: text.optional(),
  Code2: text.optional(),
  ExternalReference: text.optional(),
  SiteId: positiveId.optional(),
  ExtendedWarranty: z
    .array(
      z.object({
        Name: z.string().optional(),
        Price: z.number().optional(),
        Active: z.boolean().optional(),
        Cant: z.number().int().optional(),
        Code: z.string().optional(),
      }),
      rule(INVENTORY_RULES.ExtendedWarranty),
    )
    .optional(),
});
export type InventoryUpdate = z.infer<typeof inventoryUpdateSchema>;

const isMoney = (value: unknown): boolean => typeof value === 'number' && value >= 0.01 && value <= 999999.99 && hasAtMostTwoDecimals(value);

/**
 * The fields of an update most writes carry (a stock and price sync), each with the rule of
 * `inventoryUpdateSchema` written as a plain check. `test/store/schemas/inventory.test.ts` keeps them in
 * step with the schema.
 */
export const INVENTORY_UPDATE_PLAIN: Readonly<Partial<Record<keyof typeof inventoryUpdateSchema.shape, (value: unknown) => boolean>>> = {
  InternalId: (value) => value === 0,
  Code: (value) => typeof value === 'string' && value !== '' && value.trim() === value,
  Stock: (value) => Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 999999,
  Price: isMoney,
  OfferPrice: isMoney,
  Taxes: (value) => typeof value === 'number' && value >= 0 && value <= 100,
  ForSale: (value) => typeof value === 'boolean',
  Published: (value) => typeof value === 'boolean',
  IsItem: (value) => typeof value === 'boolean',
};

/**
 * True when `item` is an update of only the fields of `INVENTORY_UPDATE_PLAIN`, each within its rule, so
 * that `inventoryUpdateSchema` takes it: the check of every record of a 100,000-row snapshot, at a
 * fraction of the schema's cost. False says nothing: validate with the schema.
 */
export function isPlainInventoryUpdate(item: unknown): boolean {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  const record = item as Record<string, unknown>;
  if (!('Code' in record)) return false;
  for (const field in record) {
    const fits = INVENTORY_UPDATE_PLAIN[field as keyof typeof INVENTORY_UPDATE_PLAIN];
    if (fits === undefined || !Object.hasOwn(record, field) || !fits(record[field])) return false;
  }
  return true;
}
/** What callers pass: `InternalId` may be left out (the client always sends 0). */
export type InventoryUpdateInput = z.input<typeof inventoryUpdateSchema>;

/** Result of an inventory update: `{Success, Message}` (an empty body counts as success). */
export const inventoryUpdateResultSchema = z.looseObject({ Success: bool, Message: str });
export type InventoryUpdateResult = z.infer<typeof inventoryUpdateResultSchema>;
