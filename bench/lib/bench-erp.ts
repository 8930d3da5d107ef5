/**
 * The benchmarks' ERP: a change-log table in the run's own PostgreSQL, filled in bulk, and the SQL
 * source configuration that reads it.
 */
import pg from 'pg';

/** One ERP change. */
export interface ErpRow {
  code: string;
  stock: number;
  price: number;
  /** Epoch ms; the row's cursor and version. */
  at: number;
}

const TABLE = `
CREATE TABLE IF NOT EXISTS changes (
  id bigserial PRIMARY KEY,
  code text NOT NULL,
  stock integer NOT NULL,
  price numeric(12, 2) NOT NULL,
  changed_at timestamptz(3) NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_cursor ON changes (changed_at, code, id);
`;

/** The bench's ERP database. */
export class BenchErp {
  readonly pool: pg.Pool;

  constructor(readonly url: string) {
    this.pool = new pg.Pool({ connectionString: url, max: 2 });
  }

  async prepare(): Promise<void> {
    await this.pool.query(TABLE);
  }

  /** Empties the change log. */
  async clear(): Promise<void> {
    await this.pool.query('TRUNCATE changes RESTART IDENTITY');
  }

  /** Inserts rows in chunks (arrays through unnest: one statement per 5,000 rows). */
  async insert(rows: readonly ErpRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 5000) {
      const chunk = rows.slice(i, i + 5000);
      await this.pool.query(
        'INSERT INTO changes (code, stock, price, changed_at) SELECT * FROM unnest($1::text[], $2::int[], $3::numeric[], $4::timestamptz[])',
        [chunk.map((r) => r.code), chunk.map((r) => r.stock), chunk.map((r) => r.price.toFixed(2)), chunk.map((r) => new Date(r.at))],
      );
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * The SQL source over the change log, with the default `overlapMs`: a poll re-reads the rows of the
 * overlap window, which the producer skips as already delivered (see README).
 */
export function benchSource(url: string, options: { name?: string; limit?: number; overlapMs?: number; schedule?: string } = {}): Record<string, unknown> {
  return {
    name: options.name ?? 'bench',
    kind: 'sql',
    url,
    // Never fires during a run unless asked: the benchmarks start polls themselves.
    schedule: options.schedule ?? '0 0 0 1 1 *',
    limit: options.limit ?? 1000,
    // The default overlap (60 s) unless a benchmark says otherwise: what users run.
    ...(options.overlapMs === undefined ? {} : { overlapMs: options.overlapMs }),
    initialCursor: '1970-01-01T00:00:00.000Z',
    changes:
      'SELECT code AS "Code", stock AS "Stock", price AS "Price", changed_at AS cursor FROM changes ' +
      'WHERE changed_at >= :cursor ORDER BY changed_at, code, id LIMIT :limit',
    // The latest row per SKU: what the ERP holds now.
    snapshot:
      'SELECT DISTINCT ON (code) code AS "Code", stock AS "Stock", price AS "Price", changed_at AS cursor FROM changes ' +
      'ORDER BY code, changed_at DESC, id DESC',
  };
}

/** SKU code of item number `i` (1-based), as the simulator seeds them. */
export function sku(i: number): string {
  return `SKU-${String(i).padStart(6, '0')}`;
}
