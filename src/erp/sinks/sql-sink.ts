/**
 * SQL sink: writes each sale into the interface tables (PostgreSQL or MariaDB), sale and lines in one
 * transaction. The primary key (site_id, sale_id) makes a repeated export a no-op. The returned erpRef
 * is the row's `erp_reference` when the database fills it (a default or trigger the ERP team adds),
 * otherwise `<site>-<sale id>`.
 */
import { ErpError, StoreSyncError } from '../../errors.js';
import type { Sale } from '../../store/schemas/index.js';
import type { Dialect, SqlClient } from '../sql-client.js';
import { isTemporarySqlError, sqlErrorCode } from '../sql-errors.js';
import { type ColumnSpec, qualified, quoteIdent, SALE_COLUMNS, SALE_ITEM_COLUMNS, type TableNames } from './interface-tables.js';
import { assertInterfaceTables } from './migrations.js';
import { type Row, saleItemRows, saleRow } from './sale-rows.js';
import { defaultErpRef, type ExportResult, type ProcessedSale, type SalesSink, type UnprocessedSale } from './types.js';

/** Options of the SQL sink. */
export interface SqlSinkOptions {
  tables: TableNames;
  /** The store's zone, for reading the sale's zone-less dates. */
  timeZone: string;
  /** The clock of `received_at`. */
  now?: () => number;
}

const NAME = 'sql-sink';

/** The columns storesync writes; those left to the ERP take the table's defaults. */
const WRITTEN_SALE_COLUMNS = SALE_COLUMNS.filter((column) => !column.erpOwned);

/** `2024-05-01 12:00:00.000`: a UTC wall time for MariaDB's zone-less DATETIME. */
function utcDateTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/** A value as bound for the dialect: texts cut to the column length, dates and booleans made explicit. */
function bindValue(dialect: Dialect, column: ColumnSpec, value: Row[string] | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return dialect === 'postgres' ? value.toISOString() : utcDateTime(value);
  if (typeof value === 'boolean' && dialect === 'mysql') return value ? 1 : 0;
  // Never block a sale on a long street name: the complete sale is kept in sale_json.
  if (typeof value === 'string' && column.length !== undefined && value.length > column.length) {
    return [...value].slice(0, column.length).join('');
  }
  return value;
}

/** An INSERT that does nothing when the key exists, with named parameters for every column. */
function insertStatement(dialect: Dialect, table: string, columns: readonly ColumnSpec[], keyColumn: string): string {
  const names = columns.map((c) => quoteIdent(dialect, c.name)).join(', ');
  const values = columns.map((c) => (c.kind === 'json' && dialect === 'postgres' ? `CAST(:${c.name} AS JSONB)` : `:${c.name}`)).join(', ');
  const insert = `INSERT INTO ${table} (${names}) VALUES (${values})`;
  // MariaDB's INSERT IGNORE would also swallow data errors (truncation, bad dates) as warnings; a
  // no-op ON DUPLICATE KEY UPDATE ignores only the duplicate key.
  const key = quoteIdent(dialect, keyColumn);
  return dialect === 'postgres' ? `${insert} ON CONFLICT DO NOTHING` : `${insert} ON DUPLICATE KEY UPDATE ${key} = ${key}`;
}

function bindRow(dialect: Dialect, columns: readonly ColumnSpec[], row: Row): Record<string, unknown> {
  return Object.fromEntries(columns.map((c) => [c.name, bindValue(dialect, c, row[c.name])]));
}

/**
 * Whether an export that failed with `error` may work later: a lost connection, a deadlock or a table
 * being changed may; a constraint violation or a value the column refuses will fail the same way again.
 */
function retryable(error: unknown): boolean {
  // A missing table or column: they were checked at start-up, so the ERP team is changing them.
  if (sqlErrorCode(error) === 'ERR_ERP_SCHEMA') return true;
  return error instanceof StoreSyncError ? error.retryable : isTemporarySqlError(error);
}

/** Sales asked about per `processed` query. */
const PROCESSED_CHUNK = 200;

/** A timestamp column as epoch ms (drivers give Dates; MariaDB's DATETIME holds UTC). */
function instant(value: unknown): number | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === 'string' && value !== '') {
    const ms = Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

/** Writes sales into the interface tables; see the module comment. */
export class SqlSalesSink implements SalesSink {
  readonly kind = 'sql';
  readonly #sql: SqlClient;
  readonly #options: SqlSinkOptions;
  readonly #insertSale: string;
  readonly #insertItem: string;
  readonly #selectSale: string;

  /** Takes ownership of `sql`: `close()` closes it. */
  constructor(sql: SqlClient, options: SqlSinkOptions) {
    this.#sql = sql;
    this.#options = options;
    const d = sql.dialect;
    const sales = qualified(d, options.tables, 'sales');
    this.#insertSale = insertStatement(d, sales, WRITTEN_SALE_COLUMNS, 'site_id');
    this.#insertItem = insertStatement(d, qualified(d, options.tables, 'items'), SALE_ITEM_COLUMNS, 'site_id');
    this.#selectSale = `SELECT ${quoteIdent(d, 'erp_reference')} AS erp_reference FROM ${sales} WHERE ${quoteIdent(d, 'site_id')} = :site_id AND ${quoteIdent(d, 'sale_id')} = :sale_id`;
  }

  async check(): Promise<void> {
    try {
      await assertInterfaceTables(this.#sql, this.#options.tables);
    } catch (error) {
      if (error instanceof StoreSyncError) throw error;
      throw new ErpError(NAME, `cannot check the interface tables: ${(error as Error).message}`, { code: sqlErrorCode(error), cause: error });
    }
  }

  async export(sale: Sale, siteId: number): Promise<ExportResult> {
    const d = this.#sql.dialect;
    const key = { site_id: siteId, sale_id: sale.Id };
    const receivedAt = new Date(this.#options.now?.() ?? Date.now());
    const row = bindRow(d, WRITTEN_SALE_COLUMNS, saleRow(sale, siteId, { timeZone: this.#options.timeZone, receivedAt }));
    const items = saleItemRows(sale, siteId).map((item) => bindRow(d, SALE_ITEM_COLUMNS, item));
    try {
      return await this.#sql.transaction(async (tx) => {
        const existing = await tx.query(this.#selectSale, key);
        if (existing.length > 0) return { erpRef: this.#reference(existing[0], siteId, sale.Id), created: false };
        await tx.query(this.#insertSale, row);
        for (const item of items) await tx.query(this.#insertItem, item);
        // Read back: a default or trigger of the ERP may have given the row its own reference.
        const written = await tx.query(this.#selectSale, key);
        return { erpRef: this.#reference(written[0], siteId, sale.Id), created: true };
      });
    } catch (error) {
      throw new ErpError(NAME, `sale ${siteId}-${sale.Id} not written: ${(error as Error).message}`, { code: sqlErrorCode(error), cause: error, retryable: retryable(error) });
    }
  }

  async processed(keys: ReadonlyArray<{ siteId: number; saleId: number }>): Promise<ProcessedSale[]> {
    const d = this.#sql.dialect;
    const q = (name: string): string => quoteIdent(d, name);
    const out: ProcessedSale[] = [];
    for (let start = 0; start < keys.length; start += PROCESSED_CHUNK) {
      const chunk = keys.slice(start, start + PROCESSED_CHUNK);
      const params: Record<string, number> = {};
      const pairs = chunk.map((key, i) => {
        params[`s${i}`] = key.siteId;
        params[`i${i}`] = key.saleId;
        return `(${q('site_id')} = :s${i} AND ${q('sale_id')} = :i${i})`;
      });
      try {
        const rows = await this.#sql.query(
          `SELECT ${q('site_id')} AS site_id, ${q('sale_id')} AS sale_id, ${q('erp_processed_at')} AS erp_processed_at
           FROM ${qualified(d, this.#options.tables, 'sales')} WHERE ${q('erp_processed_at')} IS NOT NULL AND (${pairs.join(' OR ')})`,
          params,
        );
        for (const row of rows) {
          const processedAt = instant(row.erp_processed_at);
          if (processedAt !== null) out.push({ siteId: Number(row.site_id), saleId: Number(row.sale_id), processedAt });
        }
      } catch (error) {
        throw new ErpError(NAME, `cannot read erp_processed_at: ${(error as Error).message}`, { code: sqlErrorCode(error), cause: error });
      }
    }
    return out;
  }

  async unprocessed(): Promise<UnprocessedSale[]> {
    const d = this.#sql.dialect;
    const q = (name: string): string => quoteIdent(d, name);
    const sales = qualified(d, this.#options.tables, 'sales');
    const items = qualified(d, this.#options.tables, 'items');
    try {
      const rows = await this.#sql.query(
        `SELECT s.${q('site_id')} AS site_id, s.${q('sale_id')} AS sale_id, s.${q('received_at')} AS received_at, i.${q('code')} AS code, i.${q('quantity')} AS quantity
         FROM ${sales} s JOIN ${items} i ON i.${q('site_id')} = s.${q('site_id')} AND i.${q('sale_id')} = s.${q('sale_id')}
         WHERE s.${q('erp_processed_at')} IS NULL`,
        {},
      );
      const bySale = new Map<string, UnprocessedSale>();
      for (const row of rows) {
        const code = row.code === null || row.code === undefined ? '' : String(row.code);
        const quantity = Number(row.quantity);
        if (code === '' || !(quantity > 0)) continue;
        const id = `${row.site_id}:${row.sale_id}`;
        let sale = bySale.get(id);
        if (!sale) {
          sale = { siteId: Number(row.site_id), saleId: Number(row.sale_id), receivedAt: instant(row.received_at) ?? 0, lines: new Map() };
          bySale.set(id, sale);
        }
        sale.lines.set(code, (sale.lines.get(code) ?? 0) + quantity);
      }
      return [...bySale.values()];
    } catch (error) {
      throw new ErpError(NAME, `cannot read the sales not yet processed: ${(error as Error).message}`, { code: sqlErrorCode(error), cause: error });
    }
  }

  async close(): Promise<void> {
    await this.#sql.close();
  }

  #reference(row: Record<string, unknown> | undefined, siteId: number, saleId: number): string {
    const value = row?.erp_reference;
    return value === null || value === undefined || value === '' ? defaultErpRef(siteId, saleId) : String(value);
  }
}
