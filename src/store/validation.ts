/**
 * Validation before sending: the client and the inventory sync check payloads against the schemas of
 * schemas.ts and refuse them with a ValidationError naming record, field, value and rule, so nothing
 * invalid ever reaches the store (and a bad ERP row fails alone, visibly, without a wasted request).
 */
import type { z } from 'zod';

import { ValidationError, type ValidationIssue, valueAt } from '../errors.js';
import { inventoryUpdateSchema, isPlainInventoryUpdate } from './schemas/index.js';


function fieldName(path: readonly PropertyKey[]): string {
  return path.map((part) => (typeof part === 'number' ? `[${part}]` : String(part))).join('.').replace(/\.\[/g, '[');
}

/** Turns zod issues into ValidationIssues; unknown keys become one issue each with `unknownRule`. */
export function issuesFrom(
  error: z.ZodError,
  input: unknown,
  record: string | undefined,
  unknownRule = 'not a known field',
): ValidationIssue[] {
  const seen = new Set<string>();
  const out: ValidationIssue[] = [];
  const add = (issue: ValidationIssue): void => {
    const key = `${issue.field}\u0000${issue.rule}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(record === undefined ? issue : { record, ...issue });
  };
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        add({ field: fieldName(path), value: valueAt(input, path), rule: unknownRule });
      }
    } else {
      add({ field: fieldName(issue.path) || '(body)', value: valueAt(input, issue.path), rule: issue.message });
    }
  }
  return out;
}

function codeOf(item: unknown): string | undefined {
  const code = valueAt(item, ['Code']);
  return typeof code === 'string' && code.trim() !== '' ? code : undefined;
}

/**
 * Checks an inventory update against the spec's rules (InternalId 0, Code required, Stock integer
 * 0–999999, prices 0.01–999999.99 with 2 decimals, Taxes 0–100, booleans, PriceMode 0 or null, positive
 * ids, string DepStock, PrecioOriginal a decimal as text, Code without surrounding spaces, no unknown
 * fields). `record` names the item in the issues; it
 * defaults to the item's Code. Returns no issues when the item may be sent.
 */
export function validateInventoryUpdate(item: unknown, record?: string): ValidationIssue[] {
  if (isPlainInventoryUpdate(item)) return [];
  const parsed = inventoryUpdateSchema.safeParse(item);
  if (parsed.success) return [];
  return issuesFrom(parsed.error, item, record ?? codeOf(item), 'not a field of the inventory item');
}

/**
 * Parses `input` with `schema` or throws a ValidationError (`context` says what was being checked).
 * The error carries every issue at once, not only the first.
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  context: string,
  record?: string,
  unknownRule?: string,
): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ValidationError(issuesFrom(parsed.error, input, record, unknownRule), context);
}

/** Throws a ValidationError unless `id` (a path parameter: sale, user, client id) is a positive integer. */
export function assertPositiveId(id: number, context: string): void {
  if (!Number.isInteger(id) || id <= 0) throw new ValidationError([{ field: 'id', value: id, rule: 'positive integer' }], context);
}

/**
 * Checks the paging and typed filters of the sale list before sending: `limit` and `offset` are
 * integers not below 0, `postal_code` an integer (the spec types it so; "B1414" or "1414 " is refused).
 */
export function assertSaleListQuery(query: { limit?: number; offset?: number; postalCode?: string | number }): void {
  const issues: ValidationIssue[] = [];
  for (const field of ['limit', 'offset'] as const) {
    const value = query[field];
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) issues.push({ field, value, rule: 'integer, 0 or more' });
  }
  const postal = query.postalCode;
  if (postal !== undefined && !(typeof postal === 'number' ? Number.isInteger(postal) && postal >= 0 : /^\d+$/.test(postal))) {
    issues.push({ field: 'postal_code', value: postal, rule: 'integer (digits only)' });
  }
  if (issues.length > 0) throw new ValidationError(issues, 'sales list');
}
