/**
 * The two interface tables the SQL sink writes and the ERP reads: one row per sale, one row per sale
 * line. The column list here drives everything else — the DDL of `storesync migrate`, the start-up
 * check, the truncation of long texts — so the tables, the code and the README section on them cannot
 * drift apart silently.
 */
import type { Dialect } from '../sql-client.js';

/** Column kinds, rendered per dialect by `columnType`. */
export type ColumnKind = 'bigint' | 'int' | 'money' | 'text' | 'timestamp' | 'bool' | 'json';

/** One column of an interface table. */
export interface ColumnSpec {
  readonly name: string;
  readonly kind: ColumnKind;
  /** Character length of `text` columns; longer values are cut (the full sale stays in `sale_json`). */
  readonly length?: number;
  readonly nullable: boolean;
  /** Left to the ERP: storesync never writes it, so the ERP's defaults and triggers apply. */
  readonly erpOwned?: boolean;
}

const key = (name: string): ColumnSpec => ({ name, kind: 'bigint', nullable: false });
const text = (name: string, length: number): ColumnSpec => ({ name, kind: 'text', length, nullable: true });
const money = (name: string): ColumnSpec => ({ name, kind: 'money', nullable: true });

const address = (prefix: 'billing' | 'shipping'): ColumnSpec[] => [
  text(`${prefix}_name`, 255),
  text(`${prefix}_street`, 255),
  text(`${prefix}_number`, 50),
  text(`${prefix}_line2`, 255),
  text(`${prefix}_city`, 255),
  text(`${prefix}_state`, 255),
  text(`${prefix}_postal_code`, 50),
  text(`${prefix}_country`, 255),
];

/** Columns of the sales table, in table order. */
export const SALE_COLUMNS: readonly ColumnSpec[] = [
  key('site_id'),
  key('sale_id'),
  text('internal_code', 100),
  { name: 'status', kind: 'int', nullable: true },
  text('status_text', 255),
  money('total'),
  money('shipping_cost'),
  money('discount'),
  money('taxes'),
  money('other_cost'),
  text('currency_code', 10),
  text('customer_first_name', 255),
  text('customer_last_name', 255),
  text('customer_email', 320),
  text('customer_document', 50),
  text('customer_phone', 50),
  ...address('billing'),
  ...address('shipping'),
  { name: 'creation_date', kind: 'timestamp', nullable: true },
  { name: 'modification_date', kind: 'timestamp', nullable: true },
  text('external_reference', 255),
  { name: 'pay_method_id', kind: 'int', nullable: true },
  text('pay_method', 255),
  { name: 'installments', kind: 'int', nullable: true },
  text('shipping_method', 255),
  { name: 'sale_json', kind: 'json', nullable: false },
  { name: 'received_at', kind: 'timestamp', nullable: false },
  { ...text('erp_status', 50), erpOwned: true },
  { ...text('erp_reference', 255), erpOwned: true },
  /** Set by the ERP when it has booked the sale's stock movement: storesync then releases its reservation. */
  { name: 'erp_processed_at', kind: 'timestamp', nullable: true, erpOwned: true },
];

/** Columns of the sale lines table, in table order. */
export const SALE_ITEM_COLUMNS: readonly ColumnSpec[] = [
  key('site_id'),
  key('sale_id'),
  { name: 'line', kind: 'int', nullable: false },
  { name: 'item_id', kind: 'bigint', nullable: true },
  { name: 'product_id', kind: 'bigint', nullable: true },
  text('code', 255),
  text('name', 500),
  { name: 'quantity', kind: 'money', nullable: true },
  money('unit_price'),
  text('currency_code', 10),
  { name: 'is_item', kind: 'bool', nullable: true },
  { name: 'sale_item_type', kind: 'int', nullable: true },
  { name: 'is_combo', kind: 'bool', nullable: true },
];

/** Where the tables live: an optional schema (PostgreSQL) or database (MariaDB), and the table names. */
export interface TableNames {
  /** Schema or database; undefined: the connection's current one. */
  schema?: string | undefined;
  sales: string;
  items: string;
}

/** Quotes an identifier for the dialect (names are checked against a strict pattern by the config). */
export function quoteIdent(dialect: Dialect, name: string): string {
  return dialect === 'postgres' ? `"${name.replace(/"/g, '""')}"` : `\`${name.replace(/`/g, '``')}\``;
}

/** The table's name as used in SQL, qualified with the schema when one is configured. */
export function qualified(dialect: Dialect, names: TableNames, table: 'sales' | 'items'): string {
  const name = quoteIdent(dialect, names[table]);
  return names.schema ? `${quoteIdent(dialect, names.schema)}.${name}` : name;
}

/** The SQL type of a column in a dialect. */
export function columnType(dialect: Dialect, column: ColumnSpec): string {
  const pg = dialect === 'postgres';
  switch (column.kind) {
    case 'bigint':
      return 'BIGINT';
    case 'int':
      return 'INTEGER';
    case 'money':
      return 'DECIMAL(18,4)';
    case 'text':
      return `VARCHAR(${column.length ?? 255})`;
    // PostgreSQL stores the instant; MariaDB's DATETIME has no zone, so storesync writes UTC into it.
    case 'timestamp':
      return pg ? 'TIMESTAMPTZ' : 'DATETIME(3)';
    case 'bool':
      return 'BOOLEAN';
    case 'json':
      return pg ? 'JSONB' : 'LONGTEXT';
  }
}

function columnDefinition(dialect: Dialect, column: ColumnSpec): string {
  return `${quoteIdent(dialect, column.name)} ${columnType(dialect, column)}${column.nullable ? ' NULL' : ' NOT NULL'}`;
}

/** `CREATE TABLE IF NOT EXISTS` statements for both tables (and the ERP's polling index), in order. */
export function createStatements(dialect: Dialect, names: TableNames): string[] {
  const q = (name: string): string => quoteIdent(dialect, name);
  const sales = qualified(dialect, names, 'sales');
  const items = qualified(dialect, names, 'items');
  const tail = dialect === 'mysql' ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci' : '';
  const body = (columns: readonly ColumnSpec[], extra: string[]): string =>
    [...columns.map((c) => `  ${columnDefinition(dialect, c)}`), ...extra.map((e) => `  ${e}`)].join(',\n');
  // The lines follow their sale when the ERP deletes processed sales.
  const foreignKey = `CONSTRAINT ${q(`${names.items}_sale_fk`)} FOREIGN KEY (${q('site_id')}, ${q('sale_id')}) REFERENCES ${sales} (${q('site_id')}, ${q('sale_id')}) ON DELETE CASCADE`;
  // ERPs poll for rows they have not processed yet: `WHERE erp_status IS NULL ORDER BY received_at`.
  const index = `${names.sales}_erp_status_idx`;
  const statements = [
    `CREATE TABLE IF NOT EXISTS ${sales} (\n${body(SALE_COLUMNS, [
      `PRIMARY KEY (${q('site_id')}, ${q('sale_id')})`,
      ...(dialect === 'mysql' ? [`KEY ${q(index)} (${q('erp_status')}, ${q('received_at')})`] : []),
    ])}\n)${tail}`,
    `CREATE TABLE IF NOT EXISTS ${items} (\n${body(SALE_ITEM_COLUMNS, [
      `PRIMARY KEY (${q('site_id')}, ${q('sale_id')}, ${q('line')})`,
      foreignKey,
    ])}\n)${tail}`,
  ];
  if (dialect === 'postgres') {
    statements.push(`CREATE INDEX IF NOT EXISTS ${q(index)} ON ${sales} (${q('erp_status')}, ${q('received_at')})`);
  }
  return statements;
}

/** `ALTER TABLE … ADD COLUMN IF NOT EXISTS` for a column added to an existing table (always nullable). */
export function addColumnStatement(dialect: Dialect, names: TableNames, table: 'sales' | 'items', column: ColumnSpec): string {
  return `ALTER TABLE ${qualified(dialect, names, table)} ADD COLUMN IF NOT EXISTS ${quoteIdent(dialect, column.name)} ${columnType(dialect, column)} NULL`;
}
