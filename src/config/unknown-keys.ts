/**
 * Finds the keys of a configuration tree that its zod schema does not know, at any depth: inside
 * nested objects, array elements and the options of a discriminated union (picked by the
 * discriminator's value). zod's plain objects drop unknown keys silently, so `inventroy:` would load
 * as "no sources"; walking the schema itself keeps this generic, with no hand-kept list of keys.
 */
import type { z } from 'zod';

import { closestName } from './did-you-mean.js';

/** One key the schema does not know. */
export interface UnknownKey {
  /** Where it is: keys and array indexes from the root. */
  path: readonly (string | number)[];
  /** The closest known key at the same place, when it is close enough to be a typo. */
  suggestion?: string;
}

/** The parts of a zod definition the walk reads; every schema of the config is one of these. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: readonly z.ZodType[];
  discriminator?: string;
  valueType?: z.ZodType;
  values?: readonly unknown[];
}

function defOf(schema: z.ZodType): Def {
  return schema._zod.def as unknown as Def;
}

function isTree(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The schema under wrappers (default, prefault, optional, nullable, readonly, catch, the input side of a pipe). */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner === undefined) return current;
    current = inner;
  }
}

/**
 * The option of a discriminated union that `value` selects (undefined when its tag matches none: zod reports that), or
 * the only object option of a plain union.
 */
function unionOption(def: Def, value: Record<string, unknown>): z.ZodType | undefined {
  const options = def.options ?? [];
  if (def.discriminator === undefined) {
    // A plain union with one object option (`redis.tls`: true or an object): an object input is checked against it.
    const objects = options.filter((option) => defOf(unwrap(option)).type === 'object');
    return objects.length === 1 ? objects[0] : undefined;
  }
  const tag = value[def.discriminator];
  return options.find((option) => {
    const field = defOf(unwrap(option)).shape?.[def.discriminator as string];
    return field !== undefined && (defOf(unwrap(field)).values ?? []).includes(tag);
  });
}

/** Every key of `input` that `schema` does not declare, depth first, in the input's order. */
export function findUnknownKeys(schema: z.ZodType, input: unknown, path: readonly (string | number)[] = []): UnknownKey[] {
  const def = defOf(unwrap(schema));
  if (def.type === 'union') {
    if (!isTree(input)) return [];
    const option = unionOption(def, input);
    return option === undefined ? [] : findUnknownKeys(option, input, path);
  }
  if (def.type === 'array' && def.element !== undefined && Array.isArray(input)) {
    return input.flatMap((item, i) => findUnknownKeys(def.element as z.ZodType, item, [...path, i]));
  }
  if (def.type === 'record' && def.valueType !== undefined && isTree(input)) {
    return Object.entries(input).flatMap(([key, value]) => findUnknownKeys(def.valueType as z.ZodType, value, [...path, key]));
  }
  if (def.type !== 'object' || def.shape === undefined || !isTree(input)) return [];
  const shape = def.shape;
  const found: UnknownKey[] = [];
  for (const [key, value] of Object.entries(input)) {
    const field = shape[key];
    if (field !== undefined) {
      found.push(...findUnknownKeys(field, value, [...path, key]));
    } else if (def.catchall === undefined || defOf(def.catchall).type === 'never') {
      const suggestion = closestName(key, Object.keys(shape));
      found.push({ path: [...path, key], ...(suggestion === undefined ? {} : { suggestion }) });
    }
  }
  return found;
}

/** `a.b[0].c`: a path as the configuration's problem lines write it. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
}

/** `inventroy: unknown key (did you mean "inventory"?)`; `where` replaces the path (to name a variable too). */
export function describeUnknownKey(unknown: UnknownKey, where = formatPath(unknown.path)): string {
  const hint = unknown.suggestion === undefined ? '' : ` (did you mean "${unknown.suggestion}"?)`;
  return `${where}: unknown key${hint}`;
}
