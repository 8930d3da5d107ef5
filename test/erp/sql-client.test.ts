import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { epochMicros } from '../../src/erp/precise-date.js';
import { openSql, type SqlClient } from '../../src/erp/sql-client.js';
import { ErpError } from '../../src/errors.js';
import { redactText } from '../../src/secrets.js';
import { mariaScratch, PG_URL, pgScratch } from './databases.js';

describe('openSql on PostgreSQL', () => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;
  let db: SqlClient;
  let table: string;

  beforeAll(async () => {
    scratch = await pgScratch();
    db = scratch.db;
    table = `${scratch.schema}."Artículos"`;
    await db.query(`CREATE TABLE ${table} ("Código" text PRIMARY KEY, "Precio" numeric(12,2), "Nota" text)`);
  });
  afterAll(() => scratch.drop());

  it('binds named parameters, repeated ones too, next to casts and colons in strings', async () => {
    const rows = await db.query(`SELECT :a::int + :a::int AS twice, 'hh:mm :a' AS text, :b::text AS b`, { a: 2, b: 'x' });
    expect(rows).toEqual([{ twice: 4, text: 'hh:mm :a', b: 'x' }]);
  });

  it('returns numeric columns as strings, as the driver does', async () => {
    await db.query(`INSERT INTO ${table} VALUES (:code, :price, NULL)`, { code: 'A-1', price: '12.50' });
    expect(await db.query(`SELECT "Precio" FROM ${table} WHERE "Código" = :code`, { code: 'A-1' })).toEqual([{ Precio: '12.50' }]);
  });

  it('commits a transaction that resolves and rolls back one that throws', async () => {
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO ${table} VALUES ('T-1', 1, NULL)`);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${table} VALUES ('T-2', 1, NULL)`);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const codes = await db.query<{ code: string }>(`SELECT "Código" AS code FROM ${table} WHERE "Código" LIKE 'T-%' ORDER BY 1`);
    expect(codes.map((row) => row.code)).toEqual(['T-1']);
  });

  it('streams a large result in chunks of the requested size', async () => {
    const sizes: number[] = [];
    for await (const chunk of db.stream<{ n: number }>('SELECT n FROM generate_series(1, :top) AS n', { top: 2500 }, 1000)) {
      sizes.push(chunk.length);
    }
    expect(sizes).toEqual([1000, 1000, 500]);
  });

  it('releases the connection when a reader stops streaming early', async () => {
    const small = openSql('postgres://postgres@127.0.0.1:5432/test', { max: 1 });
    const read: number[] = [];
    for await (const chunk of small.stream('SELECT n FROM generate_series(1, 100) AS n', {}, 10)) {
      read.push(chunk.length);
      break;
    }
    expect(read).toEqual([10]);
    // With one connection in the pool, this query only runs if the stream gave it back.
    expect(await small.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await small.close();
  });

  it('queryDeferred leaves dates and timestamps as text until revive parses a row, as query reads it', async () => {
    // A zone of its own: naive timestamps and dates are that zone's wall clock (zoned-time.ts).
    const zoned = openSql(PG_URL, { timeZone: 'America/New_York', max: 1 });
    try {
      const sql = `SELECT 'A' AS code, 5 AS n, TIMESTAMP '2024-07-01 12:00:00.123456' AS naive,
        TIMESTAMPTZ '2024-07-01 12:00:00.654321+02' AS tz, DATE '2024-07-02' AS day, NULL::timestamp AS none,
        'infinity'::timestamptz AS inf, :at::timestamptz AS bound`;
      const params = { at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)) };
      const deferred = await zoned.queryDeferred!(sql, params);
      const [raw] = deferred.rows;
      // Text as PostgreSQL writes it (the session's zone is UTC, pg's default here).
      expect(raw).toEqual({
        code: 'A',
        n: 5,
        naive: '2024-07-01 12:00:00.123456',
        tz: expect.stringMatching(/^2024-07-01 10:00:00\.654321\+00(:00)?$/) as unknown,
        day: '2024-07-02',
        none: null,
        inf: 'infinity',
        bound: expect.stringMatching(/^2024-01-02 03:04:05\.006\+00(:00)?$/) as unknown,
      });
      const revived = deferred.revive(raw!);
      // New York is UTC-4 in July: 12:00 there is 16:00 UTC; a day starts at its midnight there.
      expect(epochMicros(revived.naive as Date)).toBe(Date.UTC(2024, 6, 1, 16, 0, 0, 123) * 1000 + 456);
      expect(epochMicros(revived.tz as Date)).toBe(Date.UTC(2024, 6, 1, 10, 0, 0, 654) * 1000 + 321);
      expect((revived.day as Date).getTime()).toBe(Date.UTC(2024, 6, 2, 4));
      expect(revived.none).toBeNull();
      // `infinity` is left to pg's own parser, as query does (compared below).
      expect(revived.inf).not.toBe('infinity');
      expect((revived.bound as Date).getTime()).toBe(params.at.getTime());
      // Exactly what query returns, column order included; the text row itself is left as it was.
      const [parsed] = await zoned.query(sql, params);
      expect(Object.keys(revived)).toEqual(Object.keys(parsed!));
      expect(Object.fromEntries(Object.entries(revived).map(([k, v]) => [k, v instanceof Date ? epochMicros(v) : v]))).toEqual(
        Object.fromEntries(Object.entries(parsed!).map(([k, v]) => [k, v instanceof Date ? epochMicros(v) : v])),
      );
      expect(raw!.naive).toBe('2024-07-01 12:00:00.123456');
      // A result without such columns revives to the row itself.
      const plain = await zoned.queryDeferred!(`SELECT 1 AS one`);
      expect(plain.revive(plain.rows[0]!)).toBe(plain.rows[0]);
    } finally {
      await zoned.close();
    }
  });

  it('reports a statement error as a permanent ErpError', async () => {
    const error = await db.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(false);
  });
});

describe('openSql on MariaDB', () => {
  let scratch: Awaited<ReturnType<typeof mariaScratch>>;
  let db: SqlClient;

  beforeAll(async () => {
    scratch = await mariaScratch();
    db = scratch.db;
    await db.query('CREATE TABLE `artículos` (`código` VARCHAR(30) PRIMARY KEY, precio DECIMAL(12,2), modificado DATETIME(3))');
  });
  afterAll(() => scratch.drop());

  it('binds named parameters as ? in order, leaving backticks and strings alone', async () => {
    const rows = await db.query("SELECT :a + :a AS twice, 'x:y :a' AS `t:u`, :b AS b", { a: 2, b: 'z' });
    expect(rows).toEqual([{ twice: 4, 't:u': 'x:y :a', b: 'z' }]);
  });

  it('returns DECIMAL as strings and DATETIME(3) as Dates', async () => {
    const at = new Date(2024, 4, 1, 10, 0, 0, 123);
    await db.query('INSERT INTO `artículos` VALUES (:code, :price, :at)', { code: 'A-1', price: 12.5, at });
    expect(await db.query('SELECT precio, modificado FROM `artículos`')).toEqual([{ precio: '12.50', modificado: at }]);
  });

  it('rolls back a transaction that throws', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO `artículos` VALUES ('T-2', 1, NULL)");
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await db.query("SELECT 1 FROM `artículos` WHERE `código` = 'T-2'")).toEqual([]);
  });

  it('streams rows in chunks of the requested size', async () => {
    const sizes: number[] = [];
    for await (const chunk of db.stream('SELECT seq FROM seq_1_to_2500', {}, 1000)) sizes.push(chunk.length);
    expect(sizes).toEqual([1000, 1000, 500]);
  });
});

describe('openSql connection failures', () => {
  it.each([
    ['postgres', 'postgres://erp:Sup3r-Secret-Pw@127.0.0.1:1/test'],
    ['mariadb', 'mariadb://erp:Sup3r-Secret-Pw@127.0.0.1:1/test'],
  ])('raise a retryable ErpError without the password on %s', async (_name, url) => {
    const db = openSql(url, { name: 'erp-test' });
    const error = await db.query('SELECT 1').catch((e: unknown) => e);
    await db.close();
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(true);
    expect((error as ErpError).code).toBe('ERR_ERP_CONNECTION');
    expect((error as ErpError).message).toContain('erp-test');
    expect((error as ErpError).message).toContain('127.0.0.1:1');
    expect((error as ErpError).message).not.toContain('Sup3r-Secret-Pw');
    expect(redactText('password was Sup3r-Secret-Pw')).not.toContain('Sup3r-Secret-Pw');
  });
});
