/**
 * Coercion of ERP values to field types. ERP rows arrive as whatever the driver or file gives:
 * pg `numeric` and mysql `DECIMAL` as strings, booleans as 1/0 or "S"/"N", JSON as text, numbers
 * written "1.234,56". Each function returns the coerced value, `ABSENT` (the value carries nothing:
 * null, empty text) or a `Failure` naming the rule the value broke.
 */
import { z } from 'zod';

/** The value carries nothing: the field is left out of the record. */
export const ABSENT: unique symbol = Symbol('absent');

/** A value that cannot be coerced, with the rule it breaks (used as a ValidationIssue rule). */
export class Failure {
  constructor(readonly rule: string) {}
}

/** Options that change how text is read. */
export interface CoerceOptions {
  /** Numbers written with a decimal comma and dot thousands: "1.234,56". */
  decimalComma: boolean;
}

const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;
const COMMA_NUMBER = /^[+-]?(\d{1,3}(\.\d{3})+|\d+)(,\d+)?$/;

/** Trimmed text, or ABSENT for null, undefined and blank text. */
function text(value: unknown): string | typeof ABSENT {
  if (value === null || value === undefined) return ABSENT;
  const out = String(value).trim();
  return out === '' ? ABSENT : out;
}

/** Reads a number from a JS number, bigint or numeric text (pg numeric, decimal comma). */
export function coerceNumber(value: unknown, options: CoerceOptions): number | typeof ABSENT | Failure {
  const rule = options.decimalComma ? 'number (1.234,56)' : 'number (1234.56)';
  if (typeof value === 'number') return Number.isFinite(value) ? value : new Failure(rule);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean' || (typeof value === 'object' && value !== null)) return new Failure(rule);
  const raw = text(value);
  if (raw === ABSENT) return ABSENT;
  if (options.decimalComma) {
    if (!COMMA_NUMBER.test(raw)) return new Failure(rule);
    return Number(raw.replace(/\./g, '').replace(',', '.'));
  }
  return PLAIN_NUMBER.test(raw) ? Number(raw) : new Failure(rule);
}

/** A whole number; "12.0" is accepted, "12.5" is not. */
export function coerceInt(value: unknown, options: CoerceOptions): number | typeof ABSENT | Failure {
  const number = coerceNumber(value, options);
  if (number === ABSENT) return ABSENT;
  return number instanceof Failure || !Number.isSafeInteger(number) ? new Failure('integer') : number;
}

const TRUE_WORDS = new Set(['true', 't', '1', 'yes', 'y', 'si', 'sí', 's']);
const FALSE_WORDS = new Set(['false', 'f', '0', 'no', 'n']);
const BOOLEAN_RULE = 'boolean (true/false, 1/0, si/no)';

/** A boolean from a JS boolean, 1/0, a BIT(1) buffer or a word (true/false, si/no, S/N). */
export function coerceBoolean(value: unknown): boolean | typeof ABSENT | Failure {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : new Failure(BOOLEAN_RULE);
  // mysql BIT(1) columns arrive as a one-byte Buffer.
  if (Buffer.isBuffer(value) && value.length === 1) return value[0] !== 0;
  if (typeof value === 'object' && value !== null) return new Failure(BOOLEAN_RULE);
  const raw = text(value);
  if (raw === ABSENT) return ABSENT;
  const word = raw.toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return new Failure(BOOLEAN_RULE);
}

/** Trimmed text from text, numbers or booleans; objects are refused. */
export function coerceString(value: unknown): string | typeof ABSENT | Failure {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? new Failure('text') : value.toISOString();
  if (Buffer.isBuffer(value)) return text(value.toString('utf8'));
  if (typeof value === 'object' && value !== null) return new Failure('text');
  return text(value);
}

/** Parses JSON text (a JSON column read as text, a CSV cell); other values pass through. */
function parseJsonText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

const propertySchema = z.object({
  Key: z.string().min(1),
  Value: z.union([z.string(), z.number(), z.boolean()]).transform(String),
});

/** Properties: a list of {Key, Value}, its JSON text, or an object whose entries become the list. */
export function coerceProperties(value: unknown): { Key: string; Value: string }[] | typeof ABSENT | Failure {
  if (value === null || value === undefined) return ABSENT;
  if (typeof value === 'string' && value.trim() === '') return ABSENT;
  const parsed = parseJsonText(value);
  // A JSON object column ({"color": "red"}) is the natural ERP shape; the store wants a list.
  const list =
    parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? Object.entries(parsed).map(([Key, Value]) => ({ Key, Value: Value as unknown }))
      : parsed;
  const result = z.array(propertySchema).safeParse(list);
  return result.success ? result.data : new Failure('list of {Key, Value} (JSON)');
}

/** A list of objects (ExtendedWarranty), or its JSON text. */
export function coerceObjectList(value: unknown): Record<string, unknown>[] | typeof ABSENT | Failure {
  if (value === null || value === undefined) return ABSENT;
  if (typeof value === 'string' && value.trim() === '') return ABSENT;
  const result = z.array(z.record(z.string(), z.unknown())).safeParse(parseJsonText(value));
  return result.success ? result.data : new Failure('list of objects (JSON)');
}
