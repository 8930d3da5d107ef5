import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { SqlClient } from '../../src/erp/sql-client.js';
import type { ChangeSource } from '../../src/erp/types.js';
import { ErpError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { mariaScratch } from './databases.js';
import { codes, drain, sqlConfig } from './sources.js';

const deps = { fields: INVENTORY_FIELDS, logger: silentLogger() };
const T0 = new Date(2024, 4, 1, 10, 0, 0, 0);
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

describe('SQL source on an ERP-shaped MariaDB database', () => {
  let scratch: Awaited<ReturnType<typeof mariaScratch>>;
  let db: SqlClient;
  const opened: ChangeSource[] = [];

  // CURSOR is a reserved word in MySQL and MariaDB: the alias needs backticks.
  const changes = `SELECT cod_articulo, existencia AS Stock, precio_venta AS price, iva AS TAXES, activo AS published,
                          propiedades AS properties, modificado AS \`cursor\`
                   FROM articulos
                   WHERE :cursor IS NULL OR modificado >= :cursor
                   ORDER BY modificado, cod_articulo
                   LIMIT :limit`;

  function source(overrides: Partial<Parameters<typeof sqlConfig>[0]> = {}): ChangeSource {
    const created = createSource(sqlConfig({ url: scratch.url, changes, mapping: { cod_articulo: 'Code' }, ...overrides }), deps);
    opened.push(created);
    return created;
  }

  async function insert(code: string, stock: number, price: string, modified: Date, properties: string | null = null): Promise<void> {
    await db.query('INSERT INTO articulos VALUES (:code, :stock, :price, 21.00, 1, :properties, :modified)', {
      code,
      stock,
      price,
      properties,
      modified,
    });
  }

  beforeAll(async () => {
    scratch = await mariaScratch();
    db = scratch.db;
    await db.query(`CREATE TABLE articulos (
      cod_articulo VARCHAR(30) PRIMARY KEY, existencia INT NOT NULL, precio_venta DECIMAL(12,2) NOT NULL,
      iva DECIMAL(5,2) NOT NULL, activo TINYINT(1) NOT NULL, propiedades TEXT NULL, modificado DATETIME(3) NOT NULL)`);
  });
  beforeEach(async () => {
    await db.query('TRUNCATE TABLE articulos');
  });
  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()));
    await scratch.drop();
  });

  it('coerces DECIMAL strings, TINYINT flags and JSON text, and keeps DATETIME(3) cursors to the millisecond', async () => {
    const modified = new Date(T0.getTime() + 123);
    await insert('SKU-1', 4, '1299.90', modified, '[{"Key":"Color","Value":"Rojo"}]');
    const batch = await source().readChanges(null, 10);
    expect(batch.records).toEqual([
      {
        ref: `erp-test row cursor=${modified.toISOString()} Code=SKU-1`,
        cursor: modified.toISOString(),
        fields: { Code: 'SKU-1', Stock: 4, Price: 1299.9, Taxes: 21, Published: true, Properties: [{ Key: 'Color', Value: 'Rojo' }] },
      },
    ]);
    expect(batch.nextCursor).toBe(modified.toISOString());
  });

  it('re-reads the overlap window and picks up a late commit', async () => {
    const erp = source();
    await insert('SKU-1', 1, '10.00', at(100));
    const first = await erp.readChanges(null, 10);
    await insert('SKU-LATE', 2, '10.00', at(70));
    const second = await erp.readChanges(first.nextCursor, 10);
    expect(codes(second.records)).toEqual(['SKU-1', 'SKU-LATE']);
  });

  it('loses no row when more rows share a cursor than the limit', async () => {
    for (let i = 1; i <= 9; i += 1) await insert(`SKU-${i}`, i, '10.00', at(1));
    await insert('SKU-10', 10, '10.00', at(2));
    const { records } = await drain(source({ overlapMs: 0 }), 2);
    expect(codes(records)).toHaveLength(10);
  });

  it('rejects a row whose JSON properties are not a list of {Key, Value}', async () => {
    await insert('SKU-1', 1, '10.00', at(1), '{"broken"');
    const batch = await source().readChanges(null, 10);
    expect(batch.records).toEqual([]);
    expect(batch.rejected[0]?.issues).toEqual([
      { record: 'SKU-1', field: 'Properties', value: '{"broken"', rule: 'list of {Key, Value} (JSON)' },
    ]);
  });

  it('streams the snapshot through a mysql2 row stream in chunks of the limit', async () => {
    await db.query(`INSERT INTO articulos SELECT CONCAT('SKU-', seq), seq, seq * 1.5, 21, 1, NULL, NOW(3) FROM seq_1_to_1234`);
    const erp = source({ limit: 500, snapshot: 'SELECT cod_articulo, existencia AS stock FROM articulos' });
    const sizes: number[] = [];
    for await (const chunk of erp.snapshot!()) sizes.push(chunk.length);
    expect(sizes).toEqual([500, 500, 234]);
  });

  it('gives its connection back when the reconcile stops reading the snapshot early', async () => {
    await db.query(`INSERT INTO articulos SELECT CONCAT('SKU-', seq), seq, 1, 21, 1, NULL, NOW(3) FROM seq_1_to_300`);
    const erp = source({ limit: 100, snapshot: 'SELECT cod_articulo, existencia AS stock FROM articulos' });
    // More early stops than the source has connections: a leaked connection would block the poll below.
    const read: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      for await (const chunk of erp.snapshot!()) {
        read.push(chunk.length);
        break;
      }
    }
    expect(read).toEqual([100, 100, 100]);
    // All 300 rows share NOW(3), so the poll raises its limit to read the whole tie group.
    expect((await erp.readChanges(null, 5)).records).toHaveLength(300);
  });

  it('raises a retryable ErpError without the password when the server is unreachable', async () => {
    const erp = source({ url: 'mariadb://erp:Maria-Pa55-x@127.0.0.1:1/erp' });
    const error = await erp.readChanges(null, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(true);
    expect((error as ErpError).message).not.toContain('Maria-Pa55-x');
  });
});
