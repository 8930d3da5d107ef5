import { describe, expect, it } from 'vitest';

import { MissingParameterError, parameterNames, toPositional } from '../../src/erp/named-params.js';

describe('toPositional', () => {
  it('numbers pg parameters once per name, in order of first use', () => {
    const query = toPositional('SELECT * FROM t WHERE c >= :cursor OR :cursor IS NULL LIMIT :limit', { cursor: 5, limit: 10 }, 'postgres');
    expect(query).toEqual({ text: 'SELECT * FROM t WHERE c >= $1 OR $1 IS NULL LIMIT $2', values: [5, 10] });
  });

  it('gives mysql one ? and one value per occurrence', () => {
    const query = toPositional('SELECT * FROM t WHERE :c IS NULL OR c >= :c LIMIT :limit', { c: 'x', limit: 3 }, 'mysql');
    expect(query).toEqual({ text: 'SELECT * FROM t WHERE ? IS NULL OR c >= ? LIMIT ?', values: ['x', 'x', 3] });
  });

  it('leaves casts, quoted strings, quoted identifiers and comments untouched', () => {
    const sql = `SELECT "Hora:min"::text, 'a :b '':c', E'\\':d' -- :e\nFROM x /* :f */ WHERE y = :g::int`;
    const query = toPositional(sql, { g: 1 }, 'postgres');
    expect(query.text).toBe(`SELECT "Hora:min"::text, 'a :b '':c', E'\\':d' -- :e\nFROM x /* :f */ WHERE y = $1::int`);
    expect(query.values).toEqual([1]);
  });

  it('leaves pg dollar-quoted bodies untouched', () => {
    const query = toPositional('SELECT $tag$ :x $tag$, $$ :y $$, :z', { z: 2 }, 'postgres');
    expect(query).toEqual({ text: 'SELECT $tag$ :x $tag$, $$ :y $$, $1', values: [2] });
  });

  it('leaves mysql backticks, backslash escapes, # comments and := alone', () => {
    const sql = "SELECT `a:b`, 'it\\'s :no', @v := 1 # :c\n, :p";
    expect(toPositional(sql, { p: 3 }, 'mysql')).toEqual({ text: "SELECT `a:b`, 'it\\'s :no', @v := 1 # :c\n, ?", values: [3] });
  });

  it('binds undefined as null', () => {
    expect(toPositional('SELECT :a', { a: undefined }, 'postgres').values).toEqual([null]);
  });

  it('refuses a parameter the caller did not give', () => {
    expect(() => toPositional('SELECT :missing', {}, 'postgres')).toThrow(MissingParameterError);
  });
});

describe('parameterNames', () => {
  it('lists the parameters a query uses, not those in literals, comments or casts', () => {
    const sql = `SELECT code, ':afterKey' AS x, changed_at::text AS cursor -- :limit2
                 FROM t WHERE (:cursor IS NULL OR (changed_at, code) > (:cursor, COALESCE(:afterKey, ''))) LIMIT :limit`;
    expect([...parameterNames(sql, 'postgres')].sort()).toEqual(['afterKey', 'cursor', 'limit']);
    expect(parameterNames('SELECT 1 FROM t WHERE c >= :cursor LIMIT :limit', 'mysql').has('afterKey')).toBe(false);
  });
});
