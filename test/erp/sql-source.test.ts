import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { SqlClient } from '../../src/erp/sql-client.js';
import type { ChangeSource, SourceRecord } from '../../src/erp/types.js';
import { ErpError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { PG_URL, pgScratch } from './databases.js';
import { codes, drain, sqlConfig } from './sources.js';

const logger = silentLogger();
const deps = { fields: INVENTORY_FIELDS, logger };
const T0 = new Date(2024, 4, 1, 10, 0, 0, 0);
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

describe('SQL source on an ERP-shaped PostgreSQL schema', () => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;
  let db: SqlClient;
  let s: string;
  const opened: ChangeSource[] = [];

  /** The ERP's view, read with its own column names; the mapping renames the odd ones. */
  function source(overrides: Partial<Parameters<typeof sqlConfig>[0]> = {}): ChangeSource {
    const created = createSource(
      sqlConfig({
        url: PG_URL,
        changes: `SELECT * FROM ${s}.v_stock_changes
                  WHERE "Modificado" >= COALESCE(CAST(:cursor AS timestamp), '-infinity')
                  ORDER BY "Modificado", "Código" LIMIT :limit`,
        mapping: { Código: 'Code', Publicado: 'Published', Modificado: 'cursor' },
        overlapMs: 60_000,
        ...overrides,
      }),
      deps,
    );
    opened.push(created);
    return created;
  }

  async function insert(code: string, stock: string, price: string | null, modified: Date, published = 'S'): Promise<void> {
    await db.query(`INSERT INTO ${s}."Artículos" VALUES (:code, :name, :stock, :price, :published, :modified)`, {
      code,
      name: `Artículo ${code}`,
      stock,
      price,
      published,
      modified,
    });
  }

  beforeAll(async () => {
    scratch = await pgScratch();
    db = scratch.db;
    s = scratch.schema;
    await db.query(`CREATE TABLE ${s}."Artículos" (
      "Código" varchar(30) PRIMARY KEY, "Descripción" text, "Existencia" varchar(12),
      "PrecioVenta" numeric(12,2), "Publicado" char(1), "Modificado" timestamp(3) NOT NULL)`);
    await db.query(`CREATE VIEW ${s}.v_stock_changes AS
      SELECT "Código", "Existencia" AS stock, "PrecioVenta" AS "PRICE", "Publicado", "Modificado" FROM ${s}."Artículos"`);
  });
  beforeEach(async () => {
    await db.query(`TRUNCATE ${s}."Artículos"`);
  });
  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()));
    await scratch.drop();
  });

  it('reads mapped, case-insensitive columns with numeric strings and S/N flags coerced', async () => {
    await insert('SKU-1', '12', '1234.50', at(1));
    await insert('SKU-2', '0', '9.99', at(2), 'N');
    const batch = await source().readChanges(null, 100);
    expect(batch.rejected).toEqual([]);
    expect(batch.records.map((r) => r.fields)).toEqual([
      { Code: 'SKU-1', Stock: 12, Price: 1234.5, Published: true },
      { Code: 'SKU-2', Stock: 0, Price: 9.99, Published: false },
    ]);
    expect(batch.records[0]?.cursor).toBe(at(1).toISOString());
    expect(batch.records[0]?.ref).toBe(`erp-test row cursor=${at(1).toISOString()} Code=SKU-1`);
    expect(batch.nextCursor).toBe(at(2).toISOString());
  });

  it('carries only the fields a stock-only query returns', async () => {
    await insert('SKU-1', '5', '10.00', at(1));
    const stockOnly = source({
      changes: `SELECT "Código" AS code, "Existencia" AS stock, "Modificado" AS cursor FROM ${s}."Artículos"
                WHERE "Modificado" >= COALESCE(CAST(:cursor AS timestamp), '-infinity') ORDER BY cursor, code LIMIT :limit`,
      mapping: {},
    });
    const batch = await stockOnly.readChanges(null, 10);
    expect(batch.records.map((r) => r.fields)).toEqual([{ Code: 'SKU-1', Stock: 5 }]);
  });

  it('rejects rows that cannot be coerced with clear issues, and still moves the cursor past them', async () => {
    await insert('SKU-1', '7', '10.00', at(1));
    await insert('SKU-2', '12abc', '10.00', at(2));
    await insert('  ', '1', '10.00', at(3));
    const batch = await source().readChanges(null, 100);
    expect(batch.records.map((r) => r.fields.Code)).toEqual(['SKU-1']);
    expect(batch.rejected).toEqual([
      {
        ref: `erp-test row cursor=${at(2).toISOString()}`,
        issues: [{ record: 'SKU-2', field: 'Stock', value: '12abc', rule: 'integer' }],
      },
      {
        ref: `erp-test row cursor=${at(3).toISOString()}`,
        issues: [{ record: `erp-test row cursor=${at(3).toISOString()}`, field: 'Code', value: '  ', rule: 'required' }],
      },
    ]);
    expect(batch.nextCursor).toBe(at(3).toISOString());
  });

  it('re-reads the overlap window so a row committed late with an older timestamp is not missed', async () => {
    const erp = source();
    await insert('SKU-1', '1', '10.00', at(100));
    await insert('SKU-2', '2', '10.00', at(110));
    const first = await erp.readChanges(null, 100);
    expect(first.nextCursor).toBe(at(110).toISOString());

    // Committed after the poll, stamped before its cursor: one inside the overlap, one outside.
    await insert('SKU-LATE', '3', '10.00', at(80));
    await insert('SKU-ANCIENT', '4', '10.00', at(-600));
    const second = await erp.readChanges(first.nextCursor, 100);
    expect(codes(second.records)).toEqual(['SKU-1', 'SKU-2', 'SKU-LATE']);
    expect(second.nextCursor).toBe(at(110).toISOString());
  });

  it('raises the limit past a group of rows sharing one timestamp, losing none', async () => {
    for (let i = 1; i <= 7; i += 1) await insert(`SKU-${i}`, String(i), '10.00', at(5));
    await insert('SKU-8', '8', '10.00', at(6));
    const erp = source({ overlapMs: 0 });
    const { records } = await drain(erp, 3);
    expect(codes(records)).toEqual(['SKU-1', 'SKU-2', 'SKU-3', 'SKU-4', 'SKU-5', 'SKU-6', 'SKU-7', 'SKU-8']);
  });

  it('reads every row of a numeric-cursor query when ties straddle batch boundaries', async () => {
    await db.query(`CREATE TABLE ${s}.movimientos (id serial, "Código" text, cantidad int, version bigint)`);
    const versions = [1, 2, 2, 2, 2, 2, 3, 4, 4, 5];
    for (const [i, version] of versions.entries()) {
      await db.query(`INSERT INTO ${s}.movimientos ("Código", cantidad, version) VALUES (:code, :qty, :version)`, {
        code: `SKU-${i + 1}`,
        qty: i,
        version,
      });
    }
    const erp = source({
      changes: `SELECT "Código" AS code, cantidad AS stock, version AS cursor FROM ${s}.movimientos
                WHERE version >= COALESCE(CAST(:cursor AS bigint), 0) ORDER BY version, "Código" LIMIT :limit`,
      mapping: {},
    });
    const { records, cursor } = await drain(erp, 3);
    expect(codes(records)).toHaveLength(versions.length);
    expect(cursor).toBe(5);
    expect(records.every((r: SourceRecord) => typeof r.cursor === 'number')).toBe(true);
  });

  it('fails loudly, not silently, when a tie group outgrows the raised limit', async () => {
    await db.query(`INSERT INTO ${s}."Artículos" SELECT 'SKU-' || n, 'x', '1', 10, 'S', :at FROM generate_series(1, 70) AS n`, {
      at: at(5),
    });
    const error = await source({ overlapMs: 0 }).readChanges(null, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(false);
    expect((error as ErpError).message).toMatch(/more than 64 rows share cursor/);
    expect((error as ErpError).code).toBe('ERR_ERP_CURSOR');
  });

  it('streams the snapshot query in chunks of the source limit', async () => {
    await db.query(`INSERT INTO ${s}."Artículos"
      SELECT 'SKU-' || lpad(n::text, 6, '0'), 'x', (n % 50)::text, n * 1.5, 'S', now() FROM generate_series(1, 2500) AS n`);
    const erp = source({ limit: 1000, snapshot: `SELECT "Código", stock, "PRICE" FROM ${s}.v_stock_changes` });
    const sizes: number[] = [];
    const seen = new Set<string>();
    for await (const chunk of erp.snapshot?.() ?? []) {
      sizes.push(chunk.length);
      for (const record of chunk) seen.add(String(record.fields.Code));
    }
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(seen.size).toBe(2500);
  });

  it('has no snapshot when none is configured', () => {
    expect(source().snapshot).toBeUndefined();
  });

  it('reports a query without a cursor column as a configuration problem', async () => {
    await insert('SKU-1', '1', '10.00', at(1));
    const erp = source({ changes: `SELECT "Código" AS code FROM ${s}."Artículos" LIMIT :limit`, mapping: {} });
    const error = await erp.readChanges(null, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(false);
    expect((error as ErpError).message).toMatch(/column named "cursor"/);
    expect((error as ErpError).code).toBe('ERR_ERP_CURSOR');
  });

  it('raises a retryable ErpError without the password when the database is unreachable', async () => {
    const erp = source({ url: 'postgres://erp:Db-Pa55word-x@127.0.0.1:1/erp' });
    const error = await erp.readChanges(null, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(true);
    expect((error as ErpError).message).not.toContain('Db-Pa55word-x');
    expect((error as ErpError).code).toBe('ERR_ERP_CONNECTION');
  });
});
