/**
 * The chaos run's ERP: a change-log table in the run's own PostgreSQL and a driver that writes a stream
 * of versioned stock/price changes into it, with the disorder real ERPs produce:
 * - late commits: a row held back up to `maxLateMs` and inserted after newer rows of the same SKU,
 *   carrying its original (older) timestamp;
 * - repeats: the same row inserted twice;
 * - invalid rows (negative stock and a zero price) that must be rejected and never sent;
 * - downtime: while the database is stopped, rows wait in memory and are inserted when it is back.
 * The version of a change is its `changed_at`; its stock is its per-SKU sequence number, so the value the
 * store must end with, and the order in which writes may happen, are known.
 */
import { type FlushResult, RowDriver } from './row-driver.js';

/** Valid change number `version` of a SKU has stock = version and this price. */
export function priceOf(version: number): number {
  return Math.round((100 + version / 100) * 100) / 100;
}

/** The version a price of `priceOf` encodes. */
export function versionOf(price: number): number {
  return Math.round((price - 100) * 100);
}

/** The table and the source query the chaos daemons poll. */
export const ERP_SCHEMA = `
CREATE TABLE IF NOT EXISTS stock_changes (
  id bigserial PRIMARY KEY,
  code text NOT NULL,
  stock integer NOT NULL,
  price numeric(12, 2) NOT NULL,
  changed_at timestamptz(3) NOT NULL
);
CREATE INDEX IF NOT EXISTS stock_changes_cursor ON stock_changes (changed_at, code, id);
`;

/** The `changes` query of the chaos SQL source (ties broken by code and id, as the source expects). */
export const CHANGES_QUERY =
  'SELECT code AS "Code", stock AS "Stock", price AS "Price", changed_at AS cursor FROM stock_changes ' +
  'WHERE changed_at >= :cursor ORDER BY changed_at, code, id LIMIT :limit';

/** One row of the stream. */
interface Row {
  code: string;
  stock: number;
  price: number;
  at: number;
}

/** The stream the driver writes. */
export interface DriverOptions {
  url: string;
  skus: readonly string[];
  /** Changes per second. */
  rate: number;
  /** Share of rows held back and inserted late (older timestamp after newer rows). */
  lateShare: number;
  maxLateMs: number;
  /** Share of rows inserted a second time. */
  repeatShare: number;
  /** Invalid rows, spread evenly over the stream of `rate × durationS` rows. */
  invalidRows: number;
  durationS: number;
  random: () => number;
}

/** What the driver wrote: the expected final state and what must never reach the store. */
export interface ErpModel {
  /** Highest valid version written per SKU. */
  latest: Map<string, number>;
  /** Invalid rows written (code and timestamp). */
  invalid: Array<{ code: string; at: number }>;
  rowsWritten: number;
  lateRows: number;
  repeatedRows: number;
  /** Inserts that failed (database down) and were retried. */
  retriedInserts: number;
}

/** Writes the stream until `stop()` is called; then flushes what is still waiting. */
export class ErpDriver extends RowDriver<Row> {
  readonly model: ErpModel = { latest: new Map(), invalid: [], rowsWritten: 0, lateRows: 0, repeatedRows: 0, retriedInserts: 0 };
  private readonly versions = new Map<string, number>();
  private readonly lastAt = new Map<string, number>();
  /** An invalid row is written at every `invalidEvery`-th emission. */
  private readonly invalidEvery: number;

  constructor(private readonly options: DriverOptions) {
    super(options.url, 2, options.rate, ERP_SCHEMA);
    this.invalidEvery = Math.max(2, Math.floor((options.rate * options.durationS) / (options.invalidRows + 1)));
  }

  protected emit(): void {
    const { skus, random } = this.options;
    const code = skus[Math.floor(random() * skus.length)] as string;
    const at = Math.max(Date.now(), (this.lastAt.get(code) ?? 0) + 1);
    this.lastAt.set(code, at);
    const now = Date.now();
    if (this.emitted % this.invalidEvery === 0 && this.model.invalid.length < this.options.invalidRows) {
      this.model.invalid.push({ code, at });
      this.held.hold({ code, stock: -1 - Math.floor(random() * 100), price: 0, at }, now);
      return;
    }
    const version = (this.versions.get(code) ?? 0) + 1;
    this.versions.set(code, version);
    this.model.latest.set(code, version);
    const row: Row = { code, stock: version, price: priceOf(version), at };
    const late = random() < this.options.lateShare;
    if (late) this.model.lateRows += 1;
    this.held.hold(row, late ? now + Math.floor(random() * this.options.maxLateMs) : now);
    if (random() < this.options.repeatShare) {
      this.model.repeatedRows += 1;
      this.held.hold(row, now + Math.floor(random() * 3000));
    }
  }

  protected async insert(rows: readonly Row[]): Promise<void> {
    const values = rows.map((_, i) => `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4})`).join(', ');
    const params = rows.flatMap((row) => [row.code, row.stock, row.price.toFixed(2), new Date(row.at)]);
    await this.pool.query(`INSERT INTO stock_changes (code, stock, price, changed_at) VALUES ${values}`, params);
  }

  protected count(result: FlushResult): void {
    if (result === undefined) return;
    if ('failed' in result) this.model.retriedInserts += 1;
    else this.model.rowsWritten += result.inserted;
  }
}
