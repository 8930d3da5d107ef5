/**
 * The chaos run's second ERP source: a legacy stock table with no change column (`stock_current`, one
 * row per SKU, rewritten in place), read by a snapshot diff. A driver rewrites rows, deletes some (they
 * must vanish: Stock 0 on the store) and puts some back, while the run kills workers, Redis and the
 * database. The value of a row encodes its version as the changes source does (Stock = version, Price =
 * `priceOf(version)`), so the stale-write check holds for these SKUs too.
 *
 * At most `maxAbsent` rows are missing at any time, under the mass guard's minimum (10 SKUs): a diff
 * never holds what the driver deleted, and the store must end equal to the table.
 */
import pg from 'pg';

import { priceOf } from './erp-driver.js';

/** The table the diff source reads. */
const DIFF_SCHEMA = `
CREATE TABLE IF NOT EXISTS stock_current (
  code text PRIMARY KEY,
  stock integer NOT NULL,
  price numeric(12, 2) NOT NULL
);
`;

/** The `snapshot` query of the chaos diff source. */
export const DIFF_SNAPSHOT_QUERY = 'SELECT code AS "Code", stock AS "Stock", price AS "Price" FROM stock_current';

/** How the driver writes. */
export interface DiffDriverOptions {
  url: string;
  skus: readonly string[];
  /** Writes per second (rewrites, deletions, rows put back). */
  rate: number;
  /** Share of writes that delete a row. */
  deleteShare: number;
  /** Most rows missing at once. */
  maxAbsent: number;
  random: () => number;
}

/** What the store must show for the table's SKUs: a row's figures, Stock 0 for a missing row. */
export interface DiffTruth {
  present: Map<string, { stock: number; price: number }>;
  absent: string[];
}

/** Writes to `stock_current` until `stop()`. */
export class DiffDriver {
  readonly stats = { rewrites: 0, deletions: 0, putBack: 0, failed: 0 };
  private readonly pool: pg.Pool;
  private readonly versions = new Map<string, number>();
  private readonly absent = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly options: DiffDriverOptions) {
    this.pool = new pg.Pool({ connectionString: options.url, max: 1, connectionTimeoutMillis: 2000 });
    // A stopped database ends idle connections; the pool reports it here and reconnects on next use.
    this.pool.on('error', () => {});
  }

  /** Creates the table with version 1 of every SKU. */
  async prepare(): Promise<void> {
    await this.pool.query(DIFF_SCHEMA);
    for (const code of this.options.skus) {
      this.versions.set(code, 1);
      await this.pool.query('INSERT INTO stock_current VALUES ($1, $2, $3)', [code, 1, priceOf(1).toFixed(2)]);
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.write(), Math.max(1, Math.round(1000 / this.options.rate)));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.pool.end();
  }

  /** The table as it is (read back, so that a write whose answer was lost still counts). */
  async truth(): Promise<DiffTruth> {
    const rows = await this.pool.query<{ code: string; stock: number; price: string }>('SELECT code, stock, price FROM stock_current');
    const present = new Map(rows.rows.map((row) => [row.code, { stock: row.stock, price: Number(row.price) }]));
    return { present, absent: this.options.skus.filter((code) => !present.has(code)) };
  }

  /** One write: a deletion, a row put back or a rewrite, each with a new version. Skipped while the database is down. */
  private async write(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    const { skus, random } = this.options;
    const code = skus[Math.floor(random() * skus.length)] as string;
    const version = (this.versions.get(code) ?? 1) + 1;
    try {
      if (this.absent.has(code)) {
        await this.pool.query('INSERT INTO stock_current VALUES ($1, $2, $3)', [code, version, priceOf(version).toFixed(2)]);
        this.absent.delete(code);
        this.stats.putBack += 1;
      } else if (random() < this.options.deleteShare && this.absent.size < this.options.maxAbsent) {
        await this.pool.query('DELETE FROM stock_current WHERE code = $1', [code]);
        this.absent.add(code);
        this.stats.deletions += 1;
        return;
      } else {
        await this.pool.query('UPDATE stock_current SET stock = $2, price = $3 WHERE code = $1', [code, version, priceOf(version).toFixed(2)]);
        this.stats.rewrites += 1;
      }
      this.versions.set(code, version);
    } catch {
      this.stats.failed += 1;
    } finally {
      this.busy = false;
    }
  }
}
