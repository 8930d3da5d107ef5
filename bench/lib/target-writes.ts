/**
 * What the store must have been sent, checked write by write: a benchmark that counted PUTs only would
 * give a flattering figure for a fan-out that sends too few (a site or a price list forgotten) or the
 * same target twice. A target is `(Code, SiteId, PriceListId)`; each expected body must come exactly
 * once, with exactly its fields.
 */
import { isDeepStrictEqual } from 'node:util';

import type { PutBody } from './raw-loops.js';
import type { Write } from './simulator-process.js';

/** The target a body or a write names, as people read it: `SKU-000001 site 2 list 1` (`-` for none). */
function targetOf(code: string, fields: { SiteId?: unknown; PriceListId?: unknown }): string {
  const part = (value: unknown): string => (value === undefined ? '-' : String(value));
  return `${code} site ${part(fields.SiteId)} list ${part(fields.PriceListId)}`;
}

/** A body's fields as the simulator logs them: all but `InternalId` and `Code`. */
function writtenFields(body: PutBody): Record<string, unknown> {
  const { InternalId: _id, Code: _code, ...fields } = body;
  return fields;
}

/** The first few of a list, and how many more: a failure names examples, not thousands of targets. */
function some(items: readonly string[]): string {
  return items.length <= 3 ? items.join('; ') : `${items.slice(0, 3).join('; ')} and ${items.length - 3} more`;
}

/**
 * The differences between the writes and the expected bodies: targets missing, written twice, not
 * expected, or written with other fields. Empty when every target was written once, as expected.
 */
export function writeProblems(expected: readonly PutBody[], writes: readonly Write[]): string[] {
  const wanted = new Map(expected.map((body) => [targetOf(body.Code, body), writtenFields(body)]));
  const seen = new Set<string>();
  const twice: string[] = [];
  const unexpected: string[] = [];
  const wrong: string[] = [];
  for (const write of writes) {
    const target = targetOf(write.code, write.fields);
    const fields = wanted.get(target);
    if (fields === undefined) unexpected.push(target);
    else if (seen.has(target)) twice.push(target);
    else if (!isDeepStrictEqual(write.fields, fields)) wrong.push(`${target}: sent ${JSON.stringify(write.fields)}, expected ${JSON.stringify(fields)}`);
    seen.add(target);
  }
  const missing = [...wanted.keys()].filter((target) => !seen.has(target));
  const problems: string[] = [];
  if (missing.length > 0) problems.push(`${missing.length} target(s) never written: ${some(missing)}`);
  if (twice.length > 0) problems.push(`${twice.length} write(s) of a target already written: ${some(twice)}`);
  if (unexpected.length > 0) problems.push(`${unexpected.length} write(s) of a target not expected: ${some(unexpected)}`);
  if (wrong.length > 0) problems.push(`${wrong.length} write(s) with other fields: ${some(wrong)}`);
  return problems;
}

/** How the writes fan out: writes per `(SiteId, PriceListId)`, e.g. `{ 'site 2': 300, 'site 2 list 1': 300 }`. */
export function fanOut(writes: readonly Write[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { fields } of writes) {
    const name = [fields.SiteId === undefined ? 'no site' : `site ${String(fields.SiteId)}`, ...(fields.PriceListId === undefined ? [] : [`list ${String(fields.PriceListId)}`])].join(' ');
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
