/**
 * Builds the configured sales sink (`sales.sink`): interface tables, an HTTP endpoint or a folder.
 */
import type { SalesSinkConfig } from '../../config/schema.js';
import { openSql } from '../sql-client.js';
import { FileSalesSink } from './file-sink.js';
import { HttpSalesSink } from './http-sink.js';
import type { TableNames } from './interface-tables.js';
import { SqlSalesSink } from './sql-sink.js';
import type { SalesSink } from './types.js';

export { migrateInterfaceTables,type MigrateReport } from './migrations.js';
export type { ExportResult, ProcessedSale, SalesSink, UnprocessedSale } from './types.js';

/** What every sink may need besides its own configuration. */
export interface SinkContext {
  /** `store.timeZone`: how the sale's zone-less dates are read. */
  timeZone: string;
  now?: () => number;
}

/** The table names of an SQL sink configuration. */
export function tableNames(config: Extract<SalesSinkConfig, { kind: 'sql' }>): TableNames {
  return { schema: config.schema, sales: config.tables.sales, items: config.tables.items };
}

/** Opens the sink described by `config`; the caller closes it. */
export function createSink(config: SalesSinkConfig, context: SinkContext): SalesSink {
  switch (config.kind) {
    case 'sql':
      return new SqlSalesSink(openSql(config.url), {
        tables: tableNames(config),
        timeZone: context.timeZone,
        ...(context.now ? { now: context.now } : {}),
      });
    case 'http':
      return new HttpSalesSink({ url: config.url, headers: config.headers, timeoutMs: config.timeoutMs });
    case 'file':
      return new FileSalesSink({ dir: config.dir });
  }
}
