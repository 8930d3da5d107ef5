/**
 * Tables shaped like real ERPs' stock tables (field-lessons.md, "How real ERPs write their stock and price
 * tables"), for tests that need the column types those ERPs really use:
 *
 * - **Odoo (PostgreSQL)**: `stock_quant` (several quants per product and location, `quantity numeric`,
 *   `write_date timestamp(6) without time zone`, naive UTC), `product_product.default_code` the SKU,
 *   `stock_location.usage = 'internal'` the sellable locations.
 * - **ERPNext (MariaDB)**: `tabBin` (one row per item and warehouse, `actual_qty`/`reserved_qty`
 *   `decimal(21,9)`, `modified datetime(6)` in the site's LOCAL time) and `tabItem Price`.
 *
 * Each shape comes with the changes queries a user would configure, with and without `:afterKey` (the
 * cursor paging idioms of README, "SQL sources").
 */
import type { SqlClient } from '../../src/erp/sql-client.js';

/** Creates Odoo's stock tables (trimmed to the columns a stock sync reads) in `schema`. */
export async function createOdooShape(db: SqlClient, schema: string): Promise<void> {
  await db.query(`
    CREATE TABLE ${schema}.product_product (
      id serial PRIMARY KEY,
      default_code varchar,
      active boolean NOT NULL DEFAULT true,
      write_date timestamp(6) without time zone NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'));
    CREATE INDEX ON ${schema}.product_product (default_code);
    CREATE TABLE ${schema}.stock_location (
      id serial PRIMARY KEY,
      name varchar NOT NULL,
      usage varchar NOT NULL);
    CREATE TABLE ${schema}.stock_quant (
      id serial PRIMARY KEY,
      product_id integer NOT NULL REFERENCES ${schema}.product_product(id),
      location_id integer NOT NULL REFERENCES ${schema}.stock_location(id),
      quantity numeric NOT NULL DEFAULT 0,
      reserved_quantity numeric NOT NULL DEFAULT 0,
      write_date timestamp(6) without time zone NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'));
    CREATE INDEX ON ${schema}.stock_quant (write_date, product_id);
    INSERT INTO ${schema}.stock_location (id, name, usage) VALUES (8, 'WH/Stock', 'internal'), (9, 'Partners/Customers', 'customer');`);
}

/** Odoo: `count` products `prefix000001…` with one internal quant each of `quantity`, all written at `writeDate` (naive UTC text). */
export async function insertOdooQuants(db: SqlClient, schema: string, options: { count: number; quantity: string; writeDate: string; prefix?: string }): Promise<void> {
  const prefix = options.prefix ?? 'ODOO-';
  await db.query(
    `WITH products AS (
       INSERT INTO ${schema}.product_product (default_code)
       SELECT :prefix || lpad(n::text, 6, '0') FROM generate_series(1, CAST(:count AS integer)) AS n
       RETURNING id)
     INSERT INTO ${schema}.stock_quant (product_id, location_id, quantity, write_date)
     SELECT id, 8, CAST(:quantity AS numeric), CAST(:writeDate AS timestamp) FROM products`,
    { prefix, count: options.count, quantity: options.quantity, writeDate: options.writeDate },
  );
}

/**
 * Odoo's sellable stock per SKU (quantity − reserved over internal locations), its newest write as the
 * cursor, paged on (cursor, SKU) with `:afterKey`; the PostgreSQL idiom of README, "SQL sources".
 */
export function odooChangesQuery(schema: string): string {
  return `SELECT p.default_code AS code, SUM(q.quantity - q.reserved_quantity) AS stock, MAX(q.write_date) AS cursor
          FROM ${schema}.stock_quant q
          JOIN ${schema}.product_product p ON p.id = q.product_id
          JOIN ${schema}.stock_location l ON l.id = q.location_id
          WHERE l.usage = 'internal' AND p.active AND p.default_code IS NOT NULL
          GROUP BY p.default_code
          HAVING CAST(:cursor AS timestamp) IS NULL
              OR (MAX(q.write_date), p.default_code) > (CAST(:cursor AS timestamp), COALESCE(CAST(:afterKey AS varchar), ''))
          ORDER BY cursor, code
          LIMIT :limit`;
}

/** Creates ERPNext's `tabBin` and `tabItem Price` (trimmed) in the connected MariaDB database. */
export async function createErpnextShape(db: SqlClient): Promise<void> {
  await db.query(`CREATE TABLE \`tabBin\` (
    name varchar(140) NOT NULL PRIMARY KEY,
    creation datetime(6) DEFAULT NULL,
    modified datetime(6) DEFAULT NULL,
    item_code varchar(140) DEFAULT NULL,
    warehouse varchar(140) DEFAULT NULL,
    actual_qty decimal(21,9) NOT NULL DEFAULT 0.000000000,
    reserved_qty decimal(21,9) NOT NULL DEFAULT 0.000000000,
    projected_qty decimal(21,9) NOT NULL DEFAULT 0.000000000,
    KEY modified (modified),
    KEY item_code (item_code),
    KEY modified_item (modified, item_code)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await db.query(`CREATE TABLE \`tabItem Price\` (
    name varchar(140) NOT NULL PRIMARY KEY,
    modified datetime(6) DEFAULT NULL,
    item_code varchar(140) DEFAULT NULL,
    price_list varchar(140) DEFAULT NULL,
    price_list_rate decimal(21,9) NOT NULL DEFAULT 0.000000000,
    KEY item_code (item_code)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
}

/** ERPNext: one bin in `Stores - S` per item `prefix000001…`, each of `actualQty`, all modified at `modified` (naive local text). */
export async function insertErpnextBins(db: SqlClient, options: { count: number; actualQty: string; modified: string; prefix?: string }): Promise<void> {
  const prefix = options.prefix ?? 'ITEM-';
  await db.query(
    `INSERT INTO \`tabBin\` (name, creation, modified, item_code, warehouse, actual_qty)
     SELECT CONCAT('BIN-', :prefix, LPAD(seq, 6, '0')), :modified, :modified, CONCAT(:prefix, LPAD(seq, 6, '0')), 'Stores - S', :actualQty
     FROM seq_1_to_${Math.trunc(options.count)}`,
    { prefix, modified: options.modified, actualQty: options.actualQty },
  );
}

/** One bin (item in `Stores - S`) written or updated at `modified` (naive local text). */
export async function upsertErpnextBin(db: SqlClient, itemCode: string, actualQty: string, modified: string): Promise<void> {
  await db.query(
    `INSERT INTO \`tabBin\` (name, creation, modified, item_code, warehouse, actual_qty)
     VALUES (CONCAT('BIN-', :itemCode), :modified, :modified, :itemCode, 'Stores - S', :actualQty)
     ON DUPLICATE KEY UPDATE modified = VALUES(modified), actual_qty = VALUES(actual_qty)`,
    { itemCode, modified, actualQty },
  );
}

/**
 * ERPNext's free stock of one warehouse, paged on (modified, item_code) with `:afterKey`: the MariaDB
 * idiom of README, "SQL sources" (spelled out with OR so that the (modified, item_code) index is used).
 */
export const ERPNEXT_CHANGES_QUERY = `SELECT item_code AS code, actual_qty - reserved_qty AS stock, modified AS \`cursor\`
  FROM \`tabBin\`
  WHERE warehouse = 'Stores - S'
    AND (:cursor IS NULL OR modified > :cursor OR (modified = :cursor AND item_code > COALESCE(:afterKey, '')))
  ORDER BY modified, item_code
  LIMIT :limit`;

/** The same without `:afterKey` (a query written before it existed): `>=` on the cursor alone. */
export const ERPNEXT_CHANGES_QUERY_WITHOUT_AFTER_KEY = `SELECT item_code AS code, actual_qty - reserved_qty AS stock, modified AS \`cursor\`
  FROM \`tabBin\`
  WHERE warehouse = 'Stores - S' AND (:cursor IS NULL OR modified >= :cursor)
  ORDER BY modified, item_code
  LIMIT :limit`;
