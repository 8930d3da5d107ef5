/**
 * Named query parameters (`:cursor`, `:limit`) translated to each driver's placeholders: `$1…` for
 * pg (a name used twice keeps its number), `?` for mysql2 (one value per occurrence). The scan skips
 * quoted strings, quoted identifiers (`"Artículo"`, `` `x` ``), comments, pg dollar quotes and `::`
 * casts, because ERP queries are full of them.
 */

/** SQL dialects the client speaks. */
export type Dialect = 'postgres' | 'mysql';

/** A query ready for the driver. */
export interface PositionalQuery {
  text: string;
  values: unknown[];
}

/** A query names a parameter that was not given (a mistake in the configured query). */
export class MissingParameterError extends Error {
  constructor(readonly parameter: string) {
    super(`the query uses :${parameter} but no value was given for it`);
    this.name = 'MissingParameterError';
  }
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;
const DOLLAR_TAG = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/;

/** Index just past a quoted section opened at `start`, where `quote` doubled is an escaped quote. */
function skipQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i];
    if (backslashEscapes && ch === '\\') i += 2;
    else if (ch === quote && sql[i + 1] === quote) i += 2;
    else if (ch === quote) return i + 1;
    else i += 1;
  }
  return sql.length;
}

/** Index just past the literal or comment starting at `i`, or `i` when none starts there. */
function skipLiteral(sql: string, i: number, dialect: Dialect): number {
  const ch = sql[i];
  const next = sql[i + 1];
  if (ch === "'") {
    // mysql escapes with backslashes by default; pg only in E'…' strings.
    const escapes = dialect === 'mysql' || (/[eE]/.test(sql[i - 1] ?? '') && !NAME_PART.test(sql[i - 2] ?? ''));
    return skipQuoted(sql, i, "'", escapes);
  }
  if (ch === '"') return skipQuoted(sql, i, '"', dialect === 'mysql');
  if (ch === '`' && dialect === 'mysql') return skipQuoted(sql, i, '`', false);
  if ((ch === '-' && next === '-') || (ch === '#' && dialect === 'mysql')) {
    const end = sql.indexOf('\n', i);
    return end === -1 ? sql.length : end;
  }
  if (ch === '/' && next === '*') {
    const end = sql.indexOf('*/', i + 2);
    return end === -1 ? sql.length : end + 2;
  }
  if (ch === '$' && dialect === 'postgres') {
    const tag = DOLLAR_TAG.exec(sql.slice(i, i + 64))?.[0];
    if (tag) {
      const end = sql.indexOf(tag, i + tag.length);
      return end === -1 ? sql.length : end + tag.length;
    }
  }
  return i;
}

/** Rewrites `:name` parameters to the dialect's placeholders and lists their values in order. */
export function toPositional(sql: string, params: Readonly<Record<string, unknown>>, dialect: Dialect): PositionalQuery {
  const values: unknown[] = [];
  const numbers = new Map<string, number>();
  let text = '';
  let i = 0;
  while (i < sql.length) {
    const skipped = skipLiteral(sql, i, dialect);
    if (skipped > i) {
      text += sql.slice(i, skipped);
      i = skipped;
      continue;
    }
    const ch = sql[i] as string;
    if (ch === ':' && sql[i + 1] === ':') {
      text += '::';
      i += 2;
      continue;
    }
    if (ch === ':' && NAME_START.test(sql[i + 1] ?? '')) {
      let end = i + 1;
      while (end < sql.length && NAME_PART.test(sql[end] as string)) end += 1;
      const name = sql.slice(i + 1, end);
      if (!Object.hasOwn(params, name)) throw new MissingParameterError(name);
      const value = params[name] ?? null;
      if (dialect === 'mysql') {
        values.push(value);
        text += '?';
      } else {
        let number = numbers.get(name);
        if (number === undefined) {
          values.push(value);
          number = values.length;
          numbers.set(name, number);
        }
        text += `$${number}`;
      }
      i = end;
      continue;
    }
    text += ch;
    i += 1;
  }
  return { text, values };
}

/** The names of the `:name` parameters a query uses (in literals, comments and `::` casts none are seen). */
export function parameterNames(sql: string, dialect: Dialect): Set<string> {
  const names = new Set<string>();
  let i = 0;
  while (i < sql.length) {
    const skipped = skipLiteral(sql, i, dialect);
    if (skipped > i) {
      i = skipped;
      continue;
    }
    if (sql[i] === ':' && sql[i + 1] === ':') {
      i += 2;
      continue;
    }
    if (sql[i] === ':' && NAME_START.test(sql[i + 1] ?? '')) {
      let end = i + 1;
      while (end < sql.length && NAME_PART.test(sql[end] as string)) end += 1;
      names.add(sql.slice(i + 1, end));
      i = end;
      continue;
    }
    i += 1;
  }
  return names;
}
