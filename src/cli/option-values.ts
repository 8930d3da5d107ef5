/**
 * Option values of CLI commands, read from their text: the one way every command parses its options
 * (commander only splits the command line). Every bad value is collected so that one ValidationError
 * names each offending option with its value and rule; the CLI exits 3 (`EXIT.validation`) and nothing
 * is sent or started.
 */
import { readFileSync } from 'node:fs';

import { ValidationError, type ValidationIssue } from '../errors.js';
import { formatQueryDate } from '../store/dates.js';

/** Reads option values, collecting every bad one so the error lists them all. */
export class OptionValues {
  readonly #issues: ValidationIssue[] = [];

  /** An integer (or a positive one, or one >= 0); undefined when the option was not given. */
  int(option: string, value: string | undefined, rule: 'integer' | 'positive integer' | 'integer >= 0' = 'integer'): number | undefined {
    if (value === undefined) return undefined;
    const n = Number(value);
    const inRange = rule === 'integer' || (rule === 'positive integer' ? n > 0 : n >= 0);
    if (value.trim() === '' || !Number.isInteger(n) || !inRange) return this.#bad(option, value, rule);
    return n;
  }

  /** A finite number (or a positive one, or a probability from 0 to 1). */
  number(option: string, value: string | undefined, rule: 'number' | 'number > 0' | 'probability from 0 to 1' = 'number'): number | undefined {
    if (value === undefined) return undefined;
    const n = Number(value);
    const inRange = rule === 'number' || (rule === 'number > 0' ? n > 0 : n >= 0 && n <= 1);
    return value.trim() === '' || !Number.isFinite(n) || !inRange ? this.#bad(option, value, rule) : n;
  }

  /** A TCP port, 0 (any free port) to 65535. */
  port(option: string, value: string | undefined): number | undefined {
    const n = this.int(option, value, 'integer >= 0');
    return n !== undefined && n > 65_535 ? this.#bad(option, String(value), 'a port number from 0 to 65535') : n;
  }

  /** One of `choices`, spelled exactly. */
  oneOf<T extends string>(option: string, value: string | undefined, choices: readonly T[]): T | undefined {
    if (value === undefined) return undefined;
    return (choices as readonly string[]).includes(value) ? (value as T) : this.#bad(option, value, `one of ${choices.join(', ')}`);
  }

  /** `true` or `false`, spelled out. */
  bool(option: string, value: string | undefined): boolean | undefined {
    if (value === undefined) return undefined;
    if (value === 'true' || value === 'false') return value === 'true';
    return this.#bad(option, value, 'true or false');
  }

  /** Comma-separated integers: `1,2`. */
  ints(option: string, value: string | undefined): number[] | undefined {
    if (value === undefined) return undefined;
    const parts = value.split(',').map((part) => part.trim());
    if (parts.some((part) => part === '' || !Number.isInteger(Number(part)))) return this.#bad(option, value, 'comma-separated integers');
    return parts.map(Number);
  }

  /** Comma-separated positive integers, none repeated: `1,2,3` (site ids). */
  uniqueIds(option: string, value: string | undefined): number[] | undefined {
    if (value === undefined) return undefined;
    const ids = value.split(',').map((part) => (/^\s*\d+\s*$/.test(part) ? Number(part) : Number.NaN));
    if (ids.some((id) => !(id > 0)) || new Set(ids).size !== ids.length) return this.#bad(option, value, 'comma-separated positive integers, none repeated');
    return ids;
  }

  /** Comma-separated `id:CODE` pairs, ids positive, no id or code repeated: `1:RETAIL,2:WHOLESALE`. */
  idCodes(option: string, value: string | undefined): Array<{ id: number; code: string }> | undefined {
    if (value === undefined) return undefined;
    const pairs = value.split(',').map((pair) => /^\s*(\d+)\s*:\s*([^:\s][^:]*?)\s*$/.exec(pair));
    const lists = pairs.map((m) => ({ id: Number(m?.[1] ?? Number.NaN), code: m?.[2] ?? '' }));
    const unique = new Set(lists.map((l) => l.id)).size === lists.length && new Set(lists.map((l) => l.code)).size === lists.length;
    if (lists.some((l) => !(l.id > 0)) || !unique) return this.#bad(option, value, 'comma-separated id:CODE pairs, ids positive, no id or code repeated');
    return lists;
  }

  /** A date as YYYY-MM-DD (a real calendar day). */
  date(option: string, value: string | undefined, timeZone: string): string | undefined {
    if (value === undefined) return undefined;
    try {
      return formatQueryDate(value, timeZone);
    } catch {
      return this.#bad(option, value, 'a date as YYYY-MM-DD');
    }
  }

  /** A JSON object (not an array or a scalar). */
  jsonObject(option: string, value: string): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(value);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Reported below like any other bad value.
    }
    this.#bad(option, value, 'a JSON object');
    return {};
  }

  /** An integer, or `null` spelled out (for fields the spec types "int or null"). */
  nullableInt(option: string, value: string | undefined): number | null | undefined {
    return value === 'null' ? null : this.int(option, value);
  }

  /** Repeated `key=value` pairs (a variadic option), as `{Key, Value}`; the value may hold `=`. */
  keyValues(option: string, values: readonly string[] | undefined): Array<{ Key: string; Value: string }> | undefined {
    if (values === undefined) return undefined;
    const out: Array<{ Key: string; Value: string }> = [];
    for (const pair of values) {
      const at = pair.indexOf('=');
      if (at <= 0) this.#bad(option, pair, 'key=value');
      else out.push({ Key: pair.slice(0, at), Value: pair.slice(at + 1) });
    }
    return out;
  }

  /** Any JSON value. */
  json(option: string, value: string | undefined): unknown {
    if (value === undefined) return undefined;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return this.#bad(option, value, 'JSON');
    }
  }

  /** A JSON object given inline or, as `@path`, read from a file (UTF-8). */
  jsonObjectOrFile(option: string, value: string | undefined): Record<string, unknown> | undefined {
    if (value === undefined) return undefined;
    if (!value.startsWith('@')) return this.jsonObject(option, value);
    let text: string;
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (error) {
      return this.#bad(option, value, `a readable file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
    return this.jsonObject(option, text);
  }

  /** An instant written in ISO 8601 with its zone (`2025-05-01T12:00:00Z`), as epoch ms. */
  instant(option: string, value: string | undefined): number | undefined {
    if (value === undefined) return undefined;
    const ms = /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/.test(value) ? Date.parse(value) : Number.NaN;
    return Number.isNaN(ms) ? this.#bad(option, value, 'an ISO 8601 time with a zone, e.g. 2025-05-01T12:00:00Z') : ms;
  }

  /**
   * Throws a ValidationError listing every bad option, if any, followed by `more` (what a check of the
   * values that did parse found: a `--price 0` the store's rules refuse next to a `--stock 1.5`);
   * `readOnly` for a command that never sends anything (see `ValidationError.readOnly`).
   */
  check(context: string, more: readonly ValidationIssue[] = [], options: { readOnly?: boolean } = {}): void {
    const issues = [...this.#issues, ...more];
    if (issues.length > 0) throw new ValidationError(issues, context, options);
  }

  #bad(option: string, value: string, rule: string): undefined {
    this.#issues.push({ field: option, value, rule });
    return undefined;
  }
}

/** Drops undefined values so that only the options given are sent. */
export function defined<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}
