/**
 * What the chaos ERP drivers share (the change log, erp-driver.ts; the price lists, price-driver.ts): a
 * pool on the run's own PostgreSQL, rows made at a steady rate, and rows held until their time. A row
 * waits until its time comes (a late commit is held back, keeping its older timestamp), and every row
 * waits while the database is down, to go in later with its original timestamp, as an ERP's own
 * transactions would.
 */
import pg from 'pg';

/** What one flush did. */
export type FlushResult = { inserted: number } | { failed: true } | undefined;

interface Held<Row> {
  row: Row;
  /** The earliest time it may be inserted. */
  notBefore: number;
}

/** Rows waiting to be inserted. */
class HeldRows<Row> {
  readonly #waiting: Array<Held<Row>> = [];
  #flushing = false;

  /** `insert` writes one batch; it throws when the database is down (the rows then stay). */
  constructor(private readonly insert: (rows: readonly Row[]) => Promise<void>) {}

  get size(): number {
    return this.#waiting.length;
  }

  hold(row: Row, notBefore: number): void {
    this.#waiting.push({ row, notBefore });
  }

  /** Inserts the rows that are due in one batch; undefined when none was due or a flush was under way. */
  async flush(): Promise<FlushResult> {
    if (this.#flushing) return undefined;
    this.#flushing = true;
    try {
      const now = Date.now();
      const ready = this.#waiting.filter((entry) => entry.notBefore <= now);
      if (ready.length === 0) return undefined;
      try {
        await this.insert(ready.map((entry) => entry.row));
      } catch {
        // The database is down: the rows stay waiting and go in with their original timestamps later.
        return { failed: true };
      }
      const sent = new Set(ready);
      for (let i = this.#waiting.length - 1; i >= 0; i -= 1) {
        if (sent.has(this.#waiting[i] as Held<Row>)) this.#waiting.splice(i, 1);
      }
      return { inserted: ready.length };
    } finally {
      this.#flushing = false;
    }
  }

  /**
   * Makes every row due and inserts them all, retrying while the database is down; `onFlush` sees each
   * flush's result. Throws when rows are left at the deadline.
   */
  async drain(deadlineMs: number, onFlush: (result: FlushResult) => void): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    while (this.#waiting.length > 0 && Date.now() < deadline) {
      for (const entry of this.#waiting) entry.notBefore = 0;
      onFlush(await this.flush());
      if (this.#waiting.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (this.#waiting.length > 0) throw new Error(`${this.#waiting.length} ERP rows could not be inserted before the deadline`);
  }
}

/** A driver making `rate` rows a second into one table until `stop()`; then inserting what it still holds. */
export abstract class RowDriver<Row> {
  protected readonly pool: pg.Pool;
  protected readonly held = new HeldRows<Row>((rows) => this.insert(rows));
  /** Rows made so far. */
  protected emitted = 0;
  #timer: NodeJS.Timeout | undefined;
  #startedAt = 0;

  constructor(
    url: string,
    poolSize: number,
    private readonly rate: number,
    private readonly schema: string,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 2000 });
    // A stopped database ends idle connections; the pool reports it here and reconnects on next use.
    this.pool.on('error', () => {});
  }

  /** Creates the table. */
  async prepare(): Promise<void> {
    await this.pool.query(this.schema);
  }

  /** Starts making `rate` rows a second. */
  start(): void {
    this.#startedAt = Date.now();
    this.#timer = setInterval(() => this.#tick(), 20);
  }

  /** Stops making rows and inserts every row still waiting (retrying while the database is down). */
  async stop(deadlineMs: number): Promise<void> {
    clearInterval(this.#timer);
    await this.held.drain(deadlineMs, (result) => this.count(result));
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.pool.end();
  }

  /** Makes the rows that are due (each `held` until its time). */
  protected abstract emit(): void;

  /** Writes one batch; throws when the database is down. */
  protected abstract insert(rows: readonly Row[]): Promise<void>;

  /** Counts what a flush did. */
  protected abstract count(result: FlushResult): void;

  #tick(): void {
    const due = Math.floor(((Date.now() - this.#startedAt) / 1000) * this.rate);
    while (this.emitted < due) {
      this.emitted += 1;
      this.emit();
    }
    void this.held.flush().then((result) => this.count(result));
  }
}
