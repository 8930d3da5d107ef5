/**
 * A legacy ERP's stock table with no change column at all (field-lessons.md): only the current figures,
 * rewritten in place, rows deleted when an article is dropped. Such a table is read by its snapshot
 * and a diff, never by a changes query (config/examples/no-change-column.yaml). PostgreSQL here.
 */
import type { SqlClient } from '../../src/erp/sql-client.js';
import type { StoreTruth } from './odoo-erp.js';

/** The legacy table and the ways its ERP writes it. */
export class LegacyErp {
  readonly #db: SqlClient;
  readonly schema: string;

  private constructor(db: SqlClient, schema: string) {
    this.#db = db;
    this.schema = schema;
  }

  static async create(db: SqlClient, schema: string): Promise<LegacyErp> {
    await db.query(`CREATE TABLE ${schema}.stock_actual (codigo varchar(20) PRIMARY KEY, existencia integer NOT NULL, precio numeric(12,2) NOT NULL)`);
    return new LegacyErp(db, schema);
  }

  /** Writes (inserts or rewrites) an article's figures. */
  async set(code: string, stock: number, price: number): Promise<void> {
    await this.#db.query(
      `INSERT INTO ${this.schema}.stock_actual VALUES (:code, :stock, :price) ON CONFLICT (codigo) DO UPDATE SET existencia = :stock, precio = :price`,
      { code, stock, price },
    );
  }

  /** Drops an article: its row is deleted. */
  async drop(code: string): Promise<void> {
    await this.#db.query(`DELETE FROM ${this.schema}.stock_actual WHERE codigo = :code`, { code });
  }

  /** A nightly reload that failed half-way: the table emptied and not refilled; `restore` puts the rows back. */
  async emptyForReload(): Promise<() => Promise<void>> {
    const rows = await this.#db.query<{ codigo: string; existencia: number; precio: string }>(`SELECT * FROM ${this.schema}.stock_actual`);
    await this.#db.query(`DELETE FROM ${this.schema}.stock_actual`);
    return async () => {
      for (const row of rows) await this.set(row.codigo, row.existencia, Number(row.precio));
    };
  }

  /** What the store should show: every row's figures. */
  async truth(): Promise<Map<string, StoreTruth>> {
    const rows = await this.#db.query<{ codigo: string; existencia: number; precio: string }>(`SELECT * FROM ${this.schema}.stock_actual`);
    return new Map(rows.map((row) => [row.codigo, { Stock: row.existencia, Price: Number(row.precio) }]));
  }
}
