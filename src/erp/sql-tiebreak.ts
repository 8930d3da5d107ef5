/**
 * What a SQL source without a usable tiebreak is told when a group of rows sharing one cursor stops its
 * poll (polling.ts), spelled for its own changes query: its cursor column, its key, its dialect. Two
 * cases: the rows' key (the column that becomes `Code`) is unique per row, and `:afterKey` pages on it;
 * or it repeats (ERPNext's `tabItem Price`: one row per item and price list), and paging on it would skip
 * the second list's row of an item cut at a page's end, so the query must return a key unique per row as
 * `pageKey` (`name`, the table's primary key) and page on that.
 */
import type { Dialect } from './named-params.js';
import type { Tiebreak } from './polling.js';

/** One part of an identifier: `modified`, `` `tabItem Price` ``, `"Código"`. */
const PART = String.raw`(?:[A-Za-z_][\w$]*|` + '`[^`]+`' + String.raw`|"[^"]+")`;

/** An identifier as a query writes it, qualified or not: `modified`, `p.item_code`, `"Artículos"."Código"`. */
const IDENTIFIER = `(${PART}(?:\\.${PART})?)`;

/** The column a query aliases to `alias` (`modified AS \`cursor\``), or undefined (an expression, no alias). */
function aliasedColumn(query: string, alias: string): string | undefined {
  const name = alias.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(String.raw`${IDENTIFIER}\s+AS\s+[\x60"]?${name}[\x60"]?(?![\w$])`, 'i').exec(query)?.[1];
}

/** The terms of the query's last ORDER BY, without ASC/DESC. */
function orderTerms(query: string): string[] {
  const clauses = [...query.matchAll(/ORDER\s+BY\s+([\s\S]+?)(?=\s+LIMIT\b|\s*\)|;|$)/gi)];
  const last = clauses.at(-1)?.[1] ?? '';
  return last
    .split(',')
    .map((term) => term.trim().replace(/\s+(ASC|DESC)$/i, ''))
    .filter((term) => term !== '');
}

/** The condition reading rows after (`:cursor`, `:afterKey`) on `cursor`, `key`, in the dialect's idiom (README, "SQL sources"). */
function afterCondition(dialect: Dialect, cursor: string, key: string): string {
  return dialect === 'postgres'
    ? `CAST(:cursor AS timestamp) IS NULL OR (${cursor}, ${key}) > (CAST(:cursor AS timestamp), COALESCE(CAST(:afterKey AS text), ''))`
    : `(:cursor IS NULL OR ${cursor} > :cursor OR (${cursor} = :cursor AND ${key} > COALESCE(:afterKey, '')))`;
}

/**
 * The tiebreak of a SQL source: whether `changes` pages by key (`pagesByKey`, it uses `:afterKey`) and
 * how to make it, by its key or by a key unique per row, with the query's own columns where they can be
 * read off it (an aggregate cursor keeps the alias, compared in HAVING).
 */
export function sqlTiebreak(changes: string | undefined, dialect: Dialect, pagesByKey: boolean, mapping: Readonly<Record<string, string>>): Tiebreak {
  const query = changes ?? '';
  const cursor = aliasedColumn(query, 'cursor') ?? (dialect === 'postgres' ? 'cursor' : '`cursor`');
  const mappedCode = Object.entries(mapping).find(([, target]) => target.toLowerCase() === 'code')?.[0];
  // A column mapped to Code may itself be an alias (`b.item_code AS Articulo`): the column it names is compared.
  const code = aliasedColumn(query, 'code') ?? (mappedCode === undefined ? undefined : (aliasedColumn(query, mappedCode) ?? mappedCode)) ?? 'code';
  const second = orderTerms(query)[1];
  const orderedByCode = second === undefined || [code.toLowerCase(), 'code', mappedCode?.toLowerCase()].includes(second.toLowerCase());
  // ERPNext's price rows are named by their primary key `name`; elsewhere the ORDER BY's tiebreak is the best guess.
  const rowKey = !orderedByCode ? second : /`tabItem Price`/i.test(query) ? 'name' : '<primary key>';
  const where = (key: string) => `WHERE … ${afterCondition(dialect, cursor, key)} ORDER BY ${cursor}, ${key}`;
  return {
    pagesByKey,
    hint: `page the changes query on (cursor, key) with :afterKey, e.g. \`${where(code)}\` (README, "SQL sources")`,
    perRowHint:
      `page the changes query on a key unique per row, returned as pageKey (:afterKey then carries it), e.g. ` +
      `\`SELECT …, ${rowKey} AS pageKey … ${where(rowKey)}\` (README, "SQL sources")`,
  };
}
