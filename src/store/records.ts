/**
 * Reading list responses record by record: one record that does not fit its schema is set aside as a
 * reject (resource, id, field, value, rule) and the others are read, so one odd sale or item never
 * stops a pull or a reconcile. The store client only reports rejects (`onReject`); what happens to them
 * (parked for an admin, counted) is the caller's decision, since the store layer knows no queue.
 */
import type { z } from 'zod';

import { describeValue, formatIssue, type ValidationIssue } from '../errors.js';
import type { CallOptions, StoreApi } from './transport.js';
import { issuesFrom } from './validation.js';

/** The resources read record by record. */
export type StoreResource = 'sale' | 'inventory';

/** A record the store sent that does not fit its schema; nothing of it was used. */
export interface RecordReject {
  resource: StoreResource;
  /** The record's key as sent (sale Id, item Code), or null when the key itself is missing or unusable. */
  id: string | null;
  /** The first broken rule; `issues` has all of them. */
  field: string;
  value: unknown;
  rule: string;
  issues: ValidationIssue[];
  /** `GET /Api/Sale/` and the like. */
  endpoint: string;
}

/** One record read: the parsed record, or why it was set aside. */
export type RecordRead<T> = { ok: true; record: T } | { ok: false; reject: RecordReject };

/** Options of a read that goes record by record. */
export interface RecordReadOptions extends CallOptions {
  /**
   * Receives each record set aside. Without it the client logs a warning per reject and goes on: a
   * reader never fails because of one record.
   */
  onReject?: (reject: RecordReject) => void;
}

/** The record's key as text (a number or a non-empty string), or null. */
function keyOf(raw: unknown, key: string): string | null {
  if (raw === null || typeof raw !== 'object') return null;
  const value = (raw as Record<string, unknown>)[key];
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  return null;
}

/** Parses one record of `resource` (key field `key`) with `schema`. */
export function readRecord<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  options: { resource: StoreResource; key: string; endpoint: string },
): RecordRead<z.infer<S>> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, record: parsed.data };
  const id = keyOf(raw, options.key);
  const record = `${options.resource} ${id ?? '(no key)'}`;
  const issues = issuesFrom(parsed.error, raw, record);
  const first = issues[0] ?? { field: '(record)', value: raw, rule: 'object' };
  return {
    ok: false,
    reject: { resource: options.resource, id, field: first.field, value: first.value, rule: first.rule, issues, endpoint: options.endpoint },
  };
}

/** The reject as one line: `sale 12: field Total = "abc" breaks "number ..."`. */
export function describeReject(reject: Pick<RecordReject, 'issues'>): string {
  return reject.issues.map(formatIssue).join('; ');
}

/** Hands a reject to the caller's `onReject`, or logs it when the caller gave none. */
export function reportReject(api: StoreApi, reject: RecordReject, options: RecordReadOptions): void {
  if (options.onReject) {
    options.onReject(reject);
    return;
  }
  api.logger.warn(
    { resource: reject.resource, id: reject.id, field: reject.field, value: describeValue(reject.value), rule: reject.rule, endpoint: reject.endpoint },
    `store record set aside: ${describeReject(reject)}`,
  );
}
