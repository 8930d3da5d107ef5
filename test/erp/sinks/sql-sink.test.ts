import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { TableNames } from '../../../src/erp/sinks/interface-tables.js';
import { assertInterfaceTables, migrateInterfaceTables } from '../../../src/erp/sinks/migrations.js';
import { SqlSalesSink } from '../../../src/erp/sinks/sql-sink.js';
import { openSql, type SqlClient } from '../../../src/erp/sql-client.js';
import { ErpError } from '../../../src/errors.js';
import { sampleSale } from './sale-fixture.js';

const TIME_ZONE = 'America/Argentina/Buenos_Aires';
const RECEIVED_AT = Date.UTC(2024, 2, 15, 12, 0, 0);

interface DialectCase {
  name: string;
  url: string;
  createSchema: (schema: string) => string;
  dropSchema: (schema: string) => string;
  /** A timestamp column rendered as UTC text. */
  utc: (column: string) => string;
  setDefault: (table: string, column: string, value: string) => string;
  dropColumn: (table: string, column: string) => string;
}

const cases: DialectCase[] = [
  {
    name: 'PostgreSQL',
    url: 'postgres://postgres@127.0.0.1:5432/test',
    createSchema: (s) => `CREATE SCHEMA "${s}"`,
    dropSchema: (s) => `DROP SCHEMA IF EXISTS "${s}" CASCADE`,
    utc: (c) => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`,
    setDefault: (t, c, v) => `ALTER TABLE ${t} ALTER COLUMN ${c} SET DEFAULT '${v}'`,
    dropColumn: (t, c) => `ALTER TABLE ${t} DROP COLUMN ${c}`,
  },
  {
    name: 'MariaDB',
    url: 'mysql://root@127.0.0.1:3306/test',
    createSchema: (s) => `CREATE DATABASE \`${s}\` CHARACTER SET utf8mb4`,
    dropSchema: (s) => `DROP DATABASE IF EXISTS \`${s}\``,
    utc: (c) => `DATE_FORMAT(${c}, '%Y-%m-%d %H:%i:%s')`,
    setDefault: (t, c, v) => `ALTER TABLE ${t} ALTER COLUMN ${c} SET DEFAULT '${v}'`,
    dropColumn: (t, c) => `ALTER TABLE ${t} DROP COLUMN ${c}`,
  },
];

describe.each(cases)('SQL sink on $name', (dialect) => {
  let admin: SqlClient;
  let sql: SqlClient;
  let names: TableNames;
  let sink: SqlSalesSink;
  const salesTable = (): string => `${names.schema}.storesync_sales`;
  const itemsTable = (): string => `${names.schema}.storesync_sale_items`;

  beforeAll(() => {
    admin = openSql(dialect.url);
  });

  afterAll(async () => {
    await admin.close();
  });

  beforeEach(async () => {
    names = { schema: `ss_${randomUUID().replace(/-/g, '').slice(0, 20)}`, sales: 'storesync_sales', items: 'storesync_sale_items' };
    await admin.query(dialect.createSchema(names.schema!));
    sql = openSql(dialect.url);
    sink = new SqlSalesSink(sql, { tables: names, timeZone: TIME_ZONE, now: () => RECEIVED_AT });
  });

  afterEach(async () => {
    await sink.close();
    await admin.query(dialect.dropSchema(names.schema!));
  });

  it('creates both tables on an empty schema and changes nothing when run again', async () => {
    expect(await migrateInterfaceTables(sql, names)).toEqual({
      created: ['storesync_sales', 'storesync_sale_items'],
      addedColumns: [],
      unchanged: [],
    });
    expect(await migrateInterfaceTables(sql, names)).toEqual({
      created: [],
      addedColumns: [],
      unchanged: ['storesync_sales', 'storesync_sale_items'],
    });
    await expect(sink.check()).resolves.toBeUndefined();
  });

  it('refuses to start without the tables and says to run storesync migrate', async () => {
    const error = await sink.check().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect(error).toMatchObject({ code: 'ERR_ERP_SCHEMA', retryable: false });
    expect((error as Error).message).toMatch(/table storesync_sales is missing; table storesync_sale_items is missing; run "storesync migrate"/);
  });

  it('names a missing column and migrate appends it back', async () => {
    await migrateInterfaceTables(sql, names);
    await admin.query(dialect.dropColumn(salesTable(), 'shipping_line2'));
    await expect(assertInterfaceTables(sql, names)).rejects.toThrow(/columns storesync_sales\.shipping_line2 are missing/);
    expect(await migrateInterfaceTables(sql, names)).toEqual({
      created: [],
      addedColumns: ['storesync_sales.shipping_line2'],
      unchanged: ['storesync_sale_items'],
    });
    await expect(sink.check()).resolves.toBeUndefined();
  });

  it('writes the sale row with UTC dates and one row per line', async () => {
    await migrateInterfaceTables(sql, names);
    const result = await sink.export(sampleSale(9001), 1);
    expect(result).toEqual({ erpRef: '1-9001', created: true });

    const [row] = await admin.query(
      `SELECT site_id, sale_id, status, total, shipping_cost, currency_code, customer_first_name, customer_last_name,
              customer_email, customer_document, billing_street, billing_number, billing_line2, billing_city,
              shipping_city, shipping_country, external_reference, pay_method, installments, erp_status, sale_json,
              ${dialect.utc('creation_date')} AS created, ${dialect.utc('modification_date')} AS modified,
              ${dialect.utc('received_at')} AS received
       FROM ${salesTable()}`,
    );
    expect(row).toMatchObject({
      status: 1,
      currency_code: 'ARS',
      customer_first_name: 'María José',
      customer_last_name: 'Núñez',
      customer_email: 'mj.nunez@example.com',
      customer_document: '30123456',
      billing_street: 'Av. Corrientes',
      billing_number: '1234',
      billing_line2: '5° B',
      billing_city: 'Buenos Aires',
      shipping_city: 'Rosario',
      shipping_country: 'AR',
      external_reference: 'WEB-9001',
      pay_method: 'Tarjeta de crédito',
      installments: 3,
      erp_status: null,
      // 23:30 in Buenos Aires on 03/14 is 02:30 UTC on 03/15.
      created: '2024-03-15 02:30:00',
      modified: '2024-03-15 11:00:00',
      received: '2024-03-15 12:00:00',
    });
    expect(Number(row!.site_id)).toBe(1);
    expect(Number(row!.sale_id)).toBe(9001);
    expect(Number(row!.total)).toBe(15_230.5);
    expect(Number(row!.shipping_cost)).toBe(1500);
    const json = typeof row!.sale_json === 'string' ? JSON.parse(row!.sale_json) : row!.sale_json;
    expect(json).toMatchObject({ Id: 9001, Items: [{ Code: 'MATE-01' }, { Code: 'BOMB-02' }] });

    const items = await admin.query(`SELECT line, item_id, product_id, code, name, quantity, unit_price, currency_code, is_item FROM ${itemsTable()} ORDER BY line`);
    expect(items.map((i) => [Number(i.line), i.code, i.name, Number(i.quantity), Number(i.unit_price), i.currency_code, Boolean(i.is_item)])).toEqual([
      [1, 'MATE-01', 'Mate de calabaza', 2, 4500, 'ARS', true],
      [2, 'BOMB-02', 'Bombilla alpaca', 1, 4730.5, 'ARS', true],
    ]);
  });

  it('changes nothing when the same sale is exported again, one after another or at once', async () => {
    await migrateInterfaceTables(sql, names);
    const first = await sink.export(sampleSale(42), 1);
    const again = await sink.export(sampleSale(42, { Total: 1 }), 1);
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => sink.export(sampleSale(43), 1)));
    expect(first).toEqual({ erpRef: '1-42', created: true });
    expect(again).toEqual({ erpRef: '1-42', created: false });
    expect(new Set(concurrent.map((r) => r.erpRef))).toEqual(new Set(['1-43']));
    const counts = await admin.query(`SELECT sale_id, COUNT(*) AS n, MAX(total) AS total FROM ${salesTable()} GROUP BY sale_id ORDER BY sale_id`);
    expect(counts.map((c) => [Number(c.sale_id), Number(c.n), Number(c.total)])).toEqual([
      [42, 1, 15_230.5],
      [43, 1, 15_230.5],
    ]);
    const [lines] = await admin.query(`SELECT COUNT(*) AS n FROM ${itemsTable()}`);
    expect(Number(lines!.n)).toBe(4);
  });

  it('returns the reference the database gives the row when the ERP team adds a default', async () => {
    await migrateInterfaceTables(sql, names);
    await admin.query(dialect.setDefault(salesTable(), 'erp_reference', 'ERP-PENDING'));
    const result = await sink.export(sampleSale(7), 2);
    expect(result).toEqual({ erpRef: 'ERP-PENDING', created: true });
  });

  it('cuts texts longer than their column and keeps the full value in sale_json', async () => {
    await migrateInterfaceTables(sql, names);
    const longStreet = 'Ñ'.repeat(300);
    await sink.export(sampleSale(8, { BillingAddress: { Street: longStreet } }), 1);
    const [row] = await admin.query(`SELECT billing_street, sale_json FROM ${salesTable()}`);
    expect(row!.billing_street).toBe('Ñ'.repeat(255));
    const json = typeof row!.sale_json === 'string' ? JSON.parse(row!.sale_json) : row!.sale_json;
    expect(json.BillingAddress.Street).toBe(longStreet);
  });

  it('rolls the sale back and reports a retryable ERP error when the lines table is gone', async () => {
    await migrateInterfaceTables(sql, names);
    await admin.query(`DROP TABLE ${itemsTable()}`);
    const error = await sink.export(sampleSale(5), 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as Error).message).toMatch(/sale 1-5 not written/);
    // The table is missing (ERR_ERP_SCHEMA), yet a sink failure is retried: the table may be restored.
    expect(error).toMatchObject({ code: 'ERR_ERP_SCHEMA', retryable: true });
    const [count] = await admin.query(`SELECT COUNT(*) AS n FROM ${salesTable()}`);
    expect(Number(count!.n)).toBe(0);
  });

  it('reports the sales the ERP marked processed (erp_processed_at, UTC) and lists the others with their lines', async () => {
    await migrateInterfaceTables(sql, names);
    for (const id of [801, 802, 803]) await sink.export(sampleSale(id), 1);
    await admin.query(`UPDATE ${salesTable()} SET erp_processed_at = '2024-03-15 13:30:00.250' WHERE sale_id = 802`);
    const processed = await sink.processed([801, 802, 804].map((saleId) => ({ siteId: 1, saleId })));
    expect(processed).toEqual([{ siteId: 1, saleId: 802, processedAt: Date.UTC(2024, 2, 15, 13, 30, 0, 250) }]);
    const open = (await sink.unprocessed()).sort((a, b) => a.saleId - b.saleId);
    expect(open.map((sale) => [sale.saleId, Object.fromEntries(sale.lines)])).toEqual([
      [801, { 'MATE-01': 2, 'BOMB-02': 1 }],
      [803, { 'MATE-01': 2, 'BOMB-02': 1 }],
    ]);
    expect(open[0]?.receivedAt).toBe(RECEIVED_AT);
  });
});
