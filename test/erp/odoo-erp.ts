/**
 * An Odoo database as the end-to-end scenarios need it: the stock tables of `erp-shapes.ts` plus
 * `product_template` (the price) and a second internal location, written the way Odoo writes them
 * (field-lessons.md): the ORM stamps `write_date` with the transaction's start in naive UTC
 * (`now() AT TIME ZONE 'UTC'`, `cr.now()`), `_merge_quants` and `_unlink_zero_quants` fold and delete
 * rows by raw SQL without touching it, a DBA's fix changes a quantity with no timestamp, archiving sets
 * `active = false`. `truth()` computes what the store should show from the raw rows, independently of
 * the source queries under test (those of config/examples/odoo.yaml).
 */
import pg from 'pg';

import type { SqlClient } from '../../src/erp/sql-client.js';
import { createOdooShape } from './erp-shapes.js';

/** Odoo's internal locations in these scenarios: WH/Stock (from erp-shapes.ts) and a shelf. */
export const ODOO_STOCK = 8;
export const ODOO_SHELF = 12;
/** A customer location: quants there are not sellable stock. */
export const ODOO_CUSTOMERS = 9;

/** What the store should show for a SKU. */
export interface StoreTruth {
  Stock: number;
  Price: number;
}

/** A product to create: its SKU, list price, and quants per location. */
export interface OdooProduct {
  sku: string;
  price: number;
  quants: Array<{ location: number; quantity: number | string; reserved?: number | string }>;
}

/** An Odoo database in a PostgreSQL schema of its own, and the ways Odoo writes to it. */
export class OdooErp {
  readonly schema: string;
  readonly #db: pg.Client;

  private constructor(schema: string, db: pg.Client) {
    this.schema = schema;
    this.#db = db;
  }

  /** Creates the tables in `schema` (through the project's client, as erp-shapes.ts expects) and connects the ERP's own client. */
  static async create(shapes: SqlClient, schema: string, url: string): Promise<OdooErp> {
    await createOdooShape(shapes, schema);
    await shapes.query(`
      CREATE TABLE ${schema}.product_template (
        id serial PRIMARY KEY,
        name varchar NOT NULL,
        list_price numeric NOT NULL DEFAULT 0,
        active boolean NOT NULL DEFAULT true,
        write_date timestamp(6) without time zone NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'));
      ALTER TABLE ${schema}.product_product ADD COLUMN product_tmpl_id integer REFERENCES ${schema}.product_template(id);
      INSERT INTO ${schema}.stock_location (id, name, usage) VALUES (${ODOO_SHELF}, 'WH/Shelf 2', 'internal');`);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    return new OdooErp(schema, db);
  }

  /** A client of the ERP's own, for a transaction held open (a long Odoo request). */
  async session(url: string): Promise<pg.Client> {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    return db;
  }

  /**
   * Creates products with their template and quants in one transaction, as an import does: one
   * write_date for all, the transaction's start or `writeDate` (naive UTC text) for a catalogue loaded earlier.
   */
  async createProducts(products: readonly OdooProduct[], options: { writeDate?: string } = {}): Promise<void> {
    const s = this.schema;
    const client = this.#db;
    const now = options.writeDate === undefined ? `now() AT TIME ZONE 'UTC'` : `CAST('${options.writeDate}' AS timestamp)`;
    await client.query('BEGIN');
    try {
      for (const product of products) {
        const template = await client.query<{ id: number }>(`INSERT INTO ${s}.product_template (name, list_price, write_date) VALUES ($1, $2, ${now}) RETURNING id`, [product.sku, product.price]);
        const created = await client.query<{ id: number }>(
          `INSERT INTO ${s}.product_product (default_code, product_tmpl_id, write_date) VALUES ($1, $2, ${now}) RETURNING id`,
          [product.sku, template.rows[0]!.id],
        );
        for (const quant of product.quants) {
          await client.query(
            `INSERT INTO ${s}.stock_quant (product_id, location_id, quantity, reserved_quantity, write_date) VALUES ($1, $2, $3, $4, ${now})`,
            [created.rows[0]!.id, quant.location, quant.quantity, quant.reserved ?? 0],
          );
        }
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  }

  /**
   * The ORM's write of a quant's quantity (and reserved quantity), stamped with the transaction's start:
   * on `client` inside an open transaction, that is when it began, whenever it commits. Adds the quant
   * when the product has none in `location`.
   */
  async ormSetQuantity(sku: string, location: number, quantity: number | string, options: { client?: pg.Client; reserved?: number | string; writeDate?: string } = {}): Promise<void> {
    const s = this.schema;
    const client = options.client ?? this.#db;
    const stamp = options.writeDate === undefined ? `now() AT TIME ZONE 'UTC'` : `CAST('${options.writeDate}' AS timestamp)`;
    const updated = await client.query(
      `UPDATE ${s}.stock_quant q SET quantity = $3, reserved_quantity = COALESCE($4, q.reserved_quantity), write_date = ${stamp}
        FROM ${s}.product_product p WHERE p.id = q.product_id AND p.default_code = $1 AND q.location_id = $2`,
      [sku, location, quantity, options.reserved ?? null],
    );
    if (updated.rowCount === 0) {
      await client.query(
        `INSERT INTO ${s}.stock_quant (product_id, location_id, quantity, reserved_quantity, write_date)
         SELECT id, $2, $3, COALESCE($4, 0), ${stamp} FROM ${s}.product_product WHERE default_code = $1`,
        [sku, location, quantity, options.reserved ?? null],
      );
    }
  }

  /** The ORM's write of a template's list price. */
  async ormSetPrice(sku: string, price: number): Promise<void> {
    const s = this.schema;
    await this.#db.query(
      `UPDATE ${s}.product_template t SET list_price = $2, write_date = now() AT TIME ZONE 'UTC' FROM ${s}.product_product p WHERE p.product_tmpl_id = t.id AND p.default_code = $1`,
      [sku, price],
    );
  }

  /** A DBA's fix (or an import tool): the quantity changed by raw SQL, `write_date` untouched. */
  async rawSetQuantity(sku: string, location: number, quantity: number | string): Promise<void> {
    const s = this.schema;
    await this.#db.query(`UPDATE ${s}.stock_quant q SET quantity = $3 FROM ${s}.product_product p WHERE p.id = q.product_id AND p.default_code = $1 AND q.location_id = $2`, [
      sku,
      location,
      quantity,
    ]);
  }

  /** `_merge_quants()`: the quants of one product and location folded into the oldest, the others deleted; no write_date moves. */
  async mergeQuants(): Promise<void> {
    const s = this.schema;
    await this.#db.query(`
      WITH groups AS (
        SELECT MIN(id) AS keep, product_id, location_id, SUM(quantity) AS quantity, SUM(reserved_quantity) AS reserved
          FROM ${s}.stock_quant GROUP BY product_id, location_id HAVING COUNT(*) > 1),
      folded AS (
        UPDATE ${s}.stock_quant q SET quantity = g.quantity, reserved_quantity = g.reserved FROM groups g WHERE q.id = g.keep)
      DELETE FROM ${s}.stock_quant q USING groups g
       WHERE q.product_id = g.product_id AND q.location_id = g.location_id AND q.id <> g.keep`);
  }

  /** `_unlink_zero_quants()`: quants with nothing in them hard-deleted, no tombstone. */
  async unlinkZeroQuants(): Promise<void> {
    await this.#db.query(`DELETE FROM ${this.schema}.stock_quant WHERE quantity = 0 AND reserved_quantity = 0`);
  }

  /** A quant deleted by raw SQL whatever it held (a cleanup script). */
  async rawDeleteQuants(sku: string, location: number): Promise<void> {
    const s = this.schema;
    await this.#db.query(`DELETE FROM ${s}.stock_quant q USING ${s}.product_product p WHERE p.id = q.product_id AND p.default_code = $1 AND q.location_id = $2`, [sku, location]);
  }

  /** Archives a product (`active = false`, through the ORM: its write_date moves). */
  async archive(sku: string): Promise<void> {
    await this.#db.query(`UPDATE ${this.schema}.product_product SET active = false, write_date = now() AT TIME ZONE 'UTC' WHERE default_code = $1`, [sku]);
  }

  /** The naive UTC text of `ms` as Odoo writes it (microseconds). */
  static naiveUtc(ms: number): string {
    return new Date(ms).toISOString().replace('T', ' ').replace('Z', '000');
  }

  /** What the store should show, computed from the raw rows (not through the source queries). */
  async truth(): Promise<Map<string, StoreTruth>> {
    const s = this.schema;
    const products = await this.#db.query<{ id: number; code: string | null; active: boolean; price: string }>(
      `SELECT p.id, p.default_code AS code, p.active AND t.active AS active, t.list_price AS price FROM ${s}.product_product p JOIN ${s}.product_template t ON t.id = p.product_tmpl_id`,
    );
    const quants = await this.#db.query<{ product_id: number; usage: string; quantity: string; reserved: string }>(
      `SELECT q.product_id, l.usage, q.quantity, q.reserved_quantity AS reserved FROM ${s}.stock_quant q JOIN ${s}.stock_location l ON l.id = q.location_id`,
    );
    const free = new Map<number, number>();
    for (const quant of quants.rows) {
      if (quant.usage !== 'internal') continue;
      free.set(quant.product_id, (free.get(quant.product_id) ?? 0) + Number(quant.quantity) - Number(quant.reserved));
    }
    const truth = new Map<string, StoreTruth>();
    for (const product of products.rows) {
      if (!product.active || product.code === null) continue;
      truth.set(product.code, { Stock: Math.max(0, Math.floor(free.get(product.id) ?? 0)), Price: Number(product.price) });
    }
    return truth;
  }

  async close(): Promise<void> {
    await this.#db.end();
  }
}
