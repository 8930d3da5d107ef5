/**
 * Option values of CLI commands, read from their text. Every bad value is collected so that one
 * ValidationError (exit 3, nothing sent) names each offending option with its value and rule.
 */
import { ValidationError, type ValidationIssue } from '../errors.js';
import { formatQueryDate } from '../store/dates.js';

/** Reads option values, collecting every bad one so the error lists them all. */
export class OptionValues {
  readonly #issues: ValidationIssue[] = [];

  /** An integer (or a positive one); undefined when the option was not given. */
  int(option: string, value: string | undefined, rule: 'integer' | 'positive integer' = 'integer'): number | undefined {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || (rule === 'positive integer' && n <= 0)) return this.#bad(option, value, rule);
    return n;
  }

  /** A finite number. */
  number(option: string, value: string | undefined): number | undefined {
    if (value === undefined) return undefined;
    const n = Number(value);
    return value.trim() === '' || !Number.isFinite(n) ? this.#bad(option, value, 'number') : n;
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

  /** Throws a ValidationError listing every bad option, if any. */
  check(context: string): void {
    if (this.#issues.length > 0) throw new ValidationError(this.#issues, context);
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
