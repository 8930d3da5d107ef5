/**
 * `storesync migrate` and the start-up check of the interface tables. Migrating is idempotent: tables
 * are created when missing and columns a newer storesync added are appended (always nullable), never
 * dropped or changed, so running it again, or against tables the ERP team extended, is safe.
 */
import { ErpError } from '../../errors.js';
import type { SqlClient } from '../sql-client.js';
import {
  addColumnStatement,
  type ColumnSpec,
  createStatements,
  SALE_COLUMNS,
  SALE_ITEM_COLUMNS,
  type TableNames,
} from './interface-tables.js';

/** What a migration found and did. */
export interface MigrateReport {
  /** Tables created by this run. */
  created: string[];
  /** Columns appended to existing tables, as `table.column`. */
  addedColumns: string[];
  /** Tables that were already complete. */
  unchanged: string[];
}

/** What the interface tables lack. */
export interface TableCheck {
  missingTables: string[];
  /** As `table.column`. */
  missingColumns: string[];
}

const TABLES = [
  ['sales', SALE_COLUMNS],
  ['items', SALE_ITEM_COLUMNS],
] as const satisfies ReadonlyArray<readonly ['sales' | 'items', readonly ColumnSpec[]]>;

/** Column names per table, read from information_schema (empty set: the table does not exist). */
async function existingColumns(sql: SqlClient, names: TableNames): Promise<Map<string, Set<string>>> {
  const pg = sql.dialect === 'postgres';
  // An explicit type for the parameter: it may be null, and PostgreSQL must still know it is text.
  const schema = `COALESCE(CAST(:schema AS ${pg ? 'TEXT' : 'CHAR'}), ${pg ? 'current_schema()' : 'DATABASE()'})`;
  const rows = await sql.query(
    `SELECT table_name AS table_name, column_name AS column_name FROM information_schema.columns
     WHERE table_schema = ${schema} AND (table_name = :sales OR table_name = :items)`,
    { schema: names.schema ?? null, sales: names.sales, items: names.items },
  );
  const columns = new Map<string, Set<string>>([
    [names.sales, new Set()],
    [names.items, new Set()],
  ]);
  for (const row of rows) {
    const table = String(row.table_name ?? row.TABLE_NAME);
    columns.get(table)?.add(String(row.column_name ?? row.COLUMN_NAME));
  }
  return columns;
}

/** Compares the tables in the database with the columns storesync writes. */
export async function checkInterfaceTables(sql: SqlClient, names: TableNames): Promise<TableCheck> {
  const columns = await existingColumns(sql, names);
  const check: TableCheck = { missingTables: [], missingColumns: [] };
  for (const [table, specs] of TABLES) {
    const present = columns.get(names[table]) ?? new Set<string>();
    if (present.size === 0) {
      check.missingTables.push(names[table]);
      continue;
    }
    for (const spec of specs) {
      if (!present.has(spec.name)) check.missingColumns.push(`${names[table]}.${spec.name}`);
    }
  }
  return check;
}

/** Throws a non-retryable error naming what is missing and telling to run `storesync migrate`. */
export async function assertInterfaceTables(sql: SqlClient, names: TableNames): Promise<void> {
  const check = await checkInterfaceTables(sql, names);
  const problems = [
    ...check.missingTables.map((table) => `table ${table} is missing`),
    ...(check.missingColumns.length > 0 ? [`columns ${check.missingColumns.join(', ')} are missing`] : []),
  ];
  if (problems.length > 0) {
    const where = names.schema ? ` in ${names.schema}` : '';
    throw new ErpError('sql-sink', `interface tables not ready${where}: ${problems.join('; ')}; run "storesync migrate"`, {
      code: 'ERR_ERP_SCHEMA',
      retryable: false,
    });
  }
}

/** Creates missing tables and appends missing columns; returns what it did. */
export async function migrateInterfaceTables(sql: SqlClient, names: TableNames): Promise<MigrateReport> {
  const before = await checkInterfaceTables(sql, names);
  for (const statement of createStatements(sql.dialect, names)) await sql.query(statement, {});
  const report: MigrateReport = { created: [...before.missingTables], addedColumns: [], unchanged: [] };
  for (const [table, specs] of TABLES) {
    if (before.missingTables.includes(names[table])) continue;
    const missing = specs.filter((spec) => before.missingColumns.includes(`${names[table]}.${spec.name}`));
    for (const spec of missing) {
      await sql.query(addColumnStatement(sql.dialect, names, table, spec), {});
      report.addedColumns.push(`${names[table]}.${spec.name}`);
    }
    if (missing.length === 0) report.unchanged.push(names[table]);
  }
  return report;
}
