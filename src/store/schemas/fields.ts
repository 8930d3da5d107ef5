/**
 * The building blocks of the store's resource schemas. Responses are read tolerantly: every object keeps
 * unknown fields (`z.looseObject`), documented fields are optional and may be null, and the loose types
 * a real service of this kind sends are read as what they mean: numbers as text (`"12.50"`, or with a
 * decimal comma `"12,50"`), booleans as `0`/`1`/`"true"`/`"1"`, and numbers where text is expected.
 * Dates stay as the store wrote them; read them with `parseStoreDate(value, store.timeZone)`.
 * Writes never use these: their schemas (the update bodies) are strict.
 */
import { z } from 'zod';

/** A zod issue message that states the broken rule. */
export const rule = (text: string) => ({ error: text });

/** The rules of the tolerant fields, worded as a rejected record's reason shows them. */
export const READ_RULES = {
  number: 'number (or a number written as text, decimal point or comma)',
  integer: 'integer (or an integer written as text)',
  boolean: 'boolean (true/false, 0/1, "true"/"false", "1"/"0")',
  string: 'string (or a number)',
  numberOrObject: 'number, numeric text, object or array',
  stringOrObject: 'string, object or array',
} as const;

// Plain decimal notation only: Number() would also read "0x1A", "Infinity" or "1e3" written by mistake.
const DECIMAL_POINT = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
// One comma and no point: the decimal comma of Spanish-speaking locales ("12,50"). "1.234,56" is ambiguous
// (a thousands separator) and stays an error rather than a guess.
const DECIMAL_COMMA = /^[+-]?\d+,\d+$/;

/** The number a numeric text means (decimal point or comma), or undefined. */
export function numberFromText(text: string): number | undefined {
  const trimmed = text.trim();
  if (DECIMAL_POINT.test(trimmed)) return Number(trimmed);
  if (DECIMAL_COMMA.test(trimmed)) return Number(trimmed.replace(',', '.'));
  return undefined;
}

/** A number, or a numeric text (`"12.50"`, `"12,50"`), read as a number. */
export const looseNumber = z.preprocess(
  (value) => (typeof value === 'string' ? (numberFromText(value) ?? value) : value),
  z.number(rule(READ_RULES.number)),
);
/** An integer, or an integer written as text (`"12"`). */
export const looseInt = z.preprocess(
  (value) => (typeof value === 'string' ? (numberFromText(value) ?? value) : value),
  z.number(rule(READ_RULES.integer)).int(rule(READ_RULES.integer)),
);

const TRUE_WORDS = new Set(['true', '1']);
const FALSE_WORDS = new Set(['false', '0']);

/** A boolean, or `0`/`1`, `"true"`/`"false"`, `"1"`/`"0"` (any case). */
export const looseBool = z.preprocess((value) => {
  if (value === 1) return true;
  if (value === 0) return false;
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
  }
  return value;
}, z.boolean(rule(READ_RULES.boolean)));

/** A string; a finite number (a postal code sent as 1425) is read as its text. */
export const looseString = z.preprocess(
  (value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : value),
  z.string(rule(READ_RULES.string)),
);

export const num = looseNumber.nullish();
export const int = looseInt.nullish();
export const str = looseString.nullish();
export const bool = looseBool.nullish();

const objectOrArray = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);
/**
 * A decimal the spec's schema listing also types "null or object" (`Taxes`): a number or numeric text is
 * read as a number, an object or array is kept as sent (its shape is not documented).
 */
export const numberOrObject = z.union([looseNumber, objectOrArray], rule(READ_RULES.numberOrObject)).nullish();
/** A text the spec's schema listing also types "null or object" (`DepStock`): kept as sent. */
export const stringOrObject = z.union([looseString, objectOrArray], rule(READ_RULES.stringOrObject)).nullish();

/** A date in one of the store's shapes (see dates.ts), kept as written. */
export const storeDate = z.union([z.string(), z.number()]).nullish();

/** The contact fields a user and a sale's customer data share (State, City, Country, Town carry codes). */
export const contactFields = {
  Address: str,
  State: str,
  City: str,
  Country: str,
  Town: str,
  PostalCode: str,
  Phone: str,
  Mobile: str,
  IdNumber: str,
};
