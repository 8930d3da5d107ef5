/**
 * The price lists of the chaos run with `--targets`: a table shaped like ERPNext's `tabItem Price` (one
 * row per item and price list, rewritten in place, `modified` a naive UTC wall-clock time taken when the
 * change is made, not when it commits) in the run's own PostgreSQL, and a driver that rewrites its rows
 * with the disorder of a real ERP:
 * - late commits: a row held back up to `maxLateMs` and committed after newer rows of other items,
 *   carrying its older `modified` (the source's overlap window must still read it);
 * - both lists of an item saved at once: two rows with the same `modified`;
 * - downtime: while the database is stopped, rows wait and go in with their timestamps when it is back.
 * A row already holding a newer `modified` is never rewritten by an older one (the later transaction
 * would have waited on the row's lock and committed last).
 *
 * The price of change `version` of a list encodes both (`listPriceOf`), so a write to a list's target is
 * known to be stale when it carries an older version than one already written there.
 */
import { type FlushResult, RowDriver } from './row-driver.js';

/** The store's price lists the ERP names, in this order (`PRICE_LISTS[n]` prices from `200 + 100 n`). */
export const PRICE_LISTS = [
  { id: 2, code: 'MINORISTA' },
  { id: 3, code: 'MAYORISTA' },
] as const;

/** The store's default list (the simulator's first): the stock rows' `Price` goes there, naming no list. */
export const DEFAULT_LIST = { id: 1, code: 'GENERAL' } as const;

/** The price every item starts with on the store, on every list: no version of either encoding. */
export const INITIAL_PRICE = 99.99;

const base = (listId: number): number => 200 + 100 * PRICE_LISTS.findIndex((list) => list.id === listId);

/** Change number `version` of list `listId`'s price of an item. */
export function listPriceOf(listId: number, version: number): number {
  return Math.round((base(listId) + version / 100) * 100) / 100;
}

/** The version a price of list `listId` encodes (0 or less: the store's initial price). */
export function listVersionOf(listId: number, price: number): number {
  return Math.round((price - base(listId)) * 100);
}

const PRICE_SCHEMA = `
CREATE TABLE IF NOT EXISTS "tabItem Price" (
  name varchar(140) PRIMARY KEY,
  modified timestamp(6) NOT NULL,
  item_code varchar(140) NOT NULL,
  price_list varchar(140) NOT NULL,
  price_list_rate numeric(21, 9) NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS item_price_modified ON "tabItem Price" (modified, name);
`;

/**
 * The `changes` query of the chaos prices source: every list's rows, `>=` the cursor (two rows of one
 * item may share a `modified`; the overlap window knows those it delivered, per item and list).
 */
export const PRICES_QUERY =
  'SELECT item_code AS "Code", price_list AS "PriceListCode", price_list_rate AS "Price", modified AS cursor FROM "tabItem Price" ' +
  'WHERE modified >= :cursor ORDER BY modified, name LIMIT :limit';

interface PriceRow {
  name: string;
  code: string;
  list: string;
  price: number;
  at: number;
}

/** How the driver writes. */
export interface PriceDriverOptions {
  url: string;
  skus: readonly string[];
  /** Item saves per second (one list, or both at once). */
  rate: number;
  lateShare: number;
  maxLateMs: number;
  /** Share of saves that write both lists of the item with one `modified`. */
  bothShare: number;
  random: () => number;
}

/** What the store's lists must end with: the table's rows, read back (list code → item code → price). */
export type PriceTruth = Map<string, Map<string, number>>;

/** Rewrites `tabItem Price` until `stop()`; then inserts what is still waiting. */
export class PriceDriver extends RowDriver<PriceRow> {
  readonly stats = { rowsWritten: 0, lateRows: 0, bothLists: 0, retriedInserts: 0 };
  private readonly versions = new Map<string, number>();
  private readonly lastAt = new Map<string, number>();

  constructor(private readonly options: PriceDriverOptions) {
    super(options.url, 1, options.rate, PRICE_SCHEMA);
  }

  /** The table as it is (read back, so that a write whose answer was lost still counts). */
  async truth(): Promise<PriceTruth> {
    const rows = await this.pool.query<{ item_code: string; price_list: string; price_list_rate: string }>('SELECT item_code, price_list, price_list_rate FROM "tabItem Price"');
    const truth: PriceTruth = new Map(PRICE_LISTS.map((list) => [list.code, new Map<string, number>()]));
    for (const row of rows.rows) truth.get(row.price_list)?.set(row.item_code, Number(row.price_list_rate));
    return truth;
  }

  /** One save of an item: one list, or both with the same `modified`. */
  protected emit(): void {
    const { skus, random } = this.options;
    const code = skus[Math.floor(random() * skus.length)] as string;
    const both = random() < this.options.bothShare;
    const lists = both ? PRICE_LISTS : [PRICE_LISTS[Math.floor(random() * PRICE_LISTS.length)] as (typeof PRICE_LISTS)[number]];
    if (both) this.stats.bothLists += 1;
    const at = Math.max(Date.now(), ...lists.map((list) => (this.lastAt.get(`${code}|${list.code}`) ?? 0) + 1));
    const late = random() < this.options.lateShare;
    const notBefore = late ? Date.now() + Math.floor(random() * this.options.maxLateMs) : Date.now();
    for (const list of lists) {
      const name = `${code}|${list.code}`;
      const version = (this.versions.get(name) ?? 0) + 1;
      this.versions.set(name, version);
      this.lastAt.set(name, at);
      if (late) this.stats.lateRows += 1;
      this.held.hold({ name, code, list: list.code, price: listPriceOf(list.id, version), at }, notBefore);
    }
  }

  /** Upserts a batch; within it and against the table, the row with the newest `modified` wins. */
  protected async insert(rows: readonly PriceRow[]): Promise<void> {
    const newest = new Map<string, PriceRow>();
    for (const row of rows) if ((newest.get(row.name)?.at ?? -1) < row.at) newest.set(row.name, row);
    const batch = [...newest.values()];
    const values = batch.map((_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`).join(', ');
    const params = batch.flatMap((row) => [row.name, naiveUtc(row.at), row.code, row.list, row.price.toFixed(2)]);
    await this.pool.query(
      `INSERT INTO "tabItem Price" (name, modified, item_code, price_list, price_list_rate) VALUES ${values} ` +
        'ON CONFLICT (name) DO UPDATE SET modified = EXCLUDED.modified, price_list_rate = EXCLUDED.price_list_rate WHERE "tabItem Price".modified < EXCLUDED.modified',
      params,
    );
  }

  protected count(result: FlushResult): void {
    if (result === undefined) return;
    if ('failed' in result) this.stats.retriedInserts += 1;
    else this.stats.rowsWritten += result.inserted;
  }
}

/** An instant as ERPNext writes `modified`: wall-clock text without a zone (here UTC). */
function naiveUtc(at: number): string {
  return new Date(at).toISOString().replace('T', ' ').replace('Z', '');
}
