/**
 * The ERP of the targets benchmark, shaped like ERPNext's (config/examples/price-lists.yaml): `tabBin`,
 * the stock of each item in a warehouse, with no site, and `tabItem Price`, one row per item and price
 * list. Both live in the run's own PostgreSQL beside the change log, and are read by two SQL sources
 * configured as a user would: polled every second, the default limit and overlap.
 */
import type pg from 'pg';

/** One stock row: an item's quantity, no site (it goes to every site of `inventory.sites`). */
export interface BinRow {
  code: string;
  qty: number;
  /** Epoch ms: `modified`, the row's cursor. */
  at: number;
}

/** One price row: an item's rate on one price list (ERPNext's `price_list` is the list's code). */
export interface ItemPriceRow {
  code: string;
  priceList: string;
  rate: number;
  at: number;
}

// ERPNext's own columns and types, trimmed to those read here; `name` is a hash there, a serial here.
const TABLES = `
CREATE TABLE IF NOT EXISTS "tabBin" (
  name bigserial PRIMARY KEY,
  item_code text NOT NULL,
  warehouse text NOT NULL DEFAULT 'Stores - S',
  actual_qty numeric(21, 9) NOT NULL,
  modified timestamptz(3) NOT NULL
);
CREATE INDEX IF NOT EXISTS "tabBin_modified" ON "tabBin" (modified, item_code, name);
CREATE TABLE IF NOT EXISTS "tabItem Price" (
  name bigserial PRIMARY KEY,
  item_code text NOT NULL,
  price_list text NOT NULL,
  price_list_rate numeric(21, 9) NOT NULL,
  currency text NOT NULL DEFAULT 'EUR',
  selling smallint NOT NULL DEFAULT 1,
  modified timestamptz(3) NOT NULL
);
CREATE INDEX IF NOT EXISTS "tabItem Price_modified" ON "tabItem Price" (modified, name);
`;

/** The two tables in the bench's ERP database (the pool of `BenchErp`). */
export class TargetsErp {
  constructor(private readonly pool: pg.Pool) {}

  async prepare(): Promise<void> {
    await this.pool.query(TABLES);
  }

  /** Empties both tables: a fresh daemon's first poll reads from the start. */
  async clear(): Promise<void> {
    await this.pool.query('TRUNCATE "tabBin", "tabItem Price" RESTART IDENTITY');
  }

  /**
   * Inserts stock and price rows in one transaction (arrays through unnest: one statement per table and
   * 5,000 rows): both sources' polls at one tick see all of them or none, so a cell's writes are not
   * spread over two polls by the time the insert takes.
   */
  async insert(bins: readonly BinRow[], prices: readonly ItemPriceRow[]): Promise<void> {
    const stamp = (rows: ReadonlyArray<{ at: number }>) => rows.map((r) => new Date(r.at));
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (let i = 0; i < bins.length; i += 5000) {
        const chunk = bins.slice(i, i + 5000);
        await client.query('INSERT INTO "tabBin" (item_code, actual_qty, modified) SELECT * FROM unnest($1::text[], $2::numeric[], $3::timestamptz[])', [
          chunk.map((r) => r.code),
          chunk.map((r) => String(r.qty)),
          stamp(chunk),
        ]);
      }
      for (let i = 0; i < prices.length; i += 5000) {
        const chunk = prices.slice(i, i + 5000);
        await client.query(
          'INSERT INTO "tabItem Price" (item_code, price_list, price_list_rate, modified) SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::timestamptz[])',
          [chunk.map((r) => r.code), chunk.map((r) => r.priceList), chunk.map((r) => r.rate.toFixed(2)), stamp(chunk)],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
}

/** The two sources over the tables, as `cliSource` configures the change log: polled every second. */
export function targetsSources(url: string): Array<Record<string, unknown>> {
  const common = { kind: 'sql', url, schedule: '*/1 * * * * *', initialCursor: '1970-01-01T00:00:00.000Z' };
  return [
    {
      ...common,
      name: 'stock',
      changes:
        'SELECT item_code AS "Code", actual_qty AS "Stock", modified AS cursor FROM "tabBin" ' +
        'WHERE modified >= :cursor ORDER BY modified, item_code, name LIMIT :limit',
    },
    {
      ...common,
      name: 'prices',
      // Both lists of an item may share a `modified`: read `>=` and ordered by the row's name.
      changes:
        'SELECT item_code AS "Code", price_list AS "PriceListCode", price_list_rate AS "Price", modified AS cursor FROM "tabItem Price" ' +
        'WHERE selling = 1 AND modified >= :cursor ORDER BY modified, name LIMIT :limit',
    },
  ];
}
