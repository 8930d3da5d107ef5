/**
 * An ERPNext database as the end-to-end scenarios need it: `tabBin` and `tabItem Price` of
 * `erp-shapes.ts` plus `tabItem` (`disabled` retires an item) and `tabDeleted Document`, written the way
 * ERPNext writes them (field-lessons.md): every write stamps `modified datetime(6)` with the wall clock
 * of the site's time zone, microseconds included; quantities are `decimal(21,9)`; a deletion leaves a
 * row in `tabDeleted Document`. `truth()` computes what the store should show from the raw rows,
 * independently of the source queries under test (those of config/examples/erpnext.yaml).
 */
import type { SqlClient } from '../../src/erp/sql-client.js';
import { createErpnextShape } from './erp-shapes.js';
import type { StoreTruth } from './odoo-erp.js';

/** The warehouses whose stock is sold (a group warehouse's children, summed). */
export const ERPNEXT_WAREHOUSES = ['Stores - S', 'Finished Goods - S'] as const;
/** The selling price list the store shows. */
export const ERPNEXT_PRICE_LIST = 'Standard Selling';

/** The wall clock of `zone` at `ms` as ERPNext writes `modified`: `YYYY-MM-DD hh:mm:ss.ffffff` (µs from `micros`). */
export function localStamp(ms: number, zone: string, micros = 0): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(ms))
      .map((part) => [part.type, part.value]),
  );
  const fraction = String((((ms % 1000) + 1000) % 1000) * 1000 + micros).padStart(6, '0');
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}.${fraction}`;
}

/** An item to create: its code, selling price, and quantities per warehouse (decimal text allowed). */
export interface ErpnextItem {
  code: string;
  price: number;
  bins: Array<{ warehouse: string; actualQty: string; reservedQty?: string }>;
}

/** An ERPNext site in a MariaDB database of its own, and the ways ERPNext writes to it. */
export class ErpnextErp {
  readonly #db: SqlClient;
  /** The site's time zone: `modified` is its wall clock. */
  readonly zone: string;
  /** The site's clock (epoch ms); a scenario moves it across a DST change. */
  clock: () => number;
  #micros = 0;

  private constructor(db: SqlClient, zone: string, clock: () => number) {
    this.#db = db;
    this.zone = zone;
    this.clock = clock;
  }

  /** Creates the tables in the database `db` is connected to. */
  static async create(db: SqlClient, options: { zone: string; clock?: () => number }): Promise<ErpnextErp> {
    await createErpnextShape(db);
    await db.query(`CREATE TABLE \`tabItem\` (
      name varchar(140) NOT NULL PRIMARY KEY,
      creation datetime(6) DEFAULT NULL,
      modified datetime(6) DEFAULT NULL,
      item_code varchar(140) DEFAULT NULL,
      item_name varchar(140) DEFAULT NULL,
      disabled int(1) NOT NULL DEFAULT 0,
      KEY modified (modified)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await db.query(`CREATE TABLE \`tabDeleted Document\` (
      name varchar(140) NOT NULL PRIMARY KEY,
      creation datetime(6) DEFAULT NULL,
      modified datetime(6) DEFAULT NULL,
      deleted_name varchar(140) DEFAULT NULL,
      deleted_doctype varchar(140) DEFAULT NULL,
      data longtext,
      KEY modified (modified)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    return new ErpnextErp(db, options.zone, options.clock ?? Date.now);
  }

  /** `now_datetime()`: the site's wall clock, microseconds included (distinct per call, as two real calls are). */
  now(): string {
    this.#micros = (this.#micros + 137) % 1000;
    return localStamp(this.clock(), this.zone, this.#micros);
  }

  /** Creates items with their bins and selling price, each write stamped `modified` (or `at`, local text). */
  async createItems(items: readonly ErpnextItem[], at?: string): Promise<void> {
    for (const item of items) {
      const modified = at ?? this.now();
      await this.#db.query('INSERT INTO `tabItem` (name, creation, modified, item_code, item_name) VALUES (:code, :modified, :modified, :code, :code)', { code: item.code, modified });
      await this.#db.query(
        "INSERT INTO `tabItem Price` (name, modified, item_code, price_list, price_list_rate) VALUES (CONCAT('PRICE-', :code), :modified, :code, :list, :price)",
        { code: item.code, modified, list: ERPNEXT_PRICE_LIST, price: item.price },
      );
      for (const bin of item.bins) await this.setBin(item.code, bin.warehouse, bin.actualQty, { at: modified, reservedQty: bin.reservedQty ?? '0' });
    }
  }

  /** A stock transaction's update of a bin (inserted when new), stamped now (or `at`, local text). */
  async setBin(code: string, warehouse: string, actualQty: string, options: { at?: string; reservedQty?: string } = {}): Promise<void> {
    await this.#db.query(
      `INSERT INTO \`tabBin\` (name, creation, modified, item_code, warehouse, actual_qty, reserved_qty)
       VALUES (CONCAT('BIN-', :code, '-', :warehouse), :modified, :modified, :code, :warehouse, :actualQty, COALESCE(:reservedQty, 0))
       ON DUPLICATE KEY UPDATE modified = VALUES(modified), actual_qty = VALUES(actual_qty), reserved_qty = COALESCE(:reservedQty, reserved_qty)`,
      { code, warehouse, actualQty, reservedQty: options.reservedQty ?? null, modified: options.at ?? this.now() },
    );
  }

  /** A bin's quantity changed by raw SQL (a repost patch, a DBA), `modified` untouched. */
  async rawSetBin(code: string, warehouse: string, actualQty: string): Promise<void> {
    await this.#db.query("UPDATE `tabBin` SET actual_qty = :actualQty WHERE item_code = :code AND warehouse = :warehouse", { code, warehouse, actualQty });
  }

  /** The selling price changed through the desk. */
  async setPrice(code: string, price: number): Promise<void> {
    await this.#db.query('UPDATE `tabItem Price` SET price_list_rate = :price, modified = :modified WHERE item_code = :code AND price_list = :list', {
      code,
      price,
      list: ERPNEXT_PRICE_LIST,
      modified: this.now(),
    });
  }

  /** Disables an item (`disabled = 1`): it drops out of the queries. */
  async disable(code: string): Promise<void> {
    await this.#db.query('UPDATE `tabItem` SET disabled = 1, modified = :modified WHERE name = :code', { code, modified: this.now() });
  }

  /** Deletes an item (one without transactions: its bins and prices go too) and leaves a `tabDeleted Document` row. */
  async deleteItem(code: string): Promise<void> {
    const modified = this.now();
    await this.#db.query('DELETE FROM `tabBin` WHERE item_code = :code', { code });
    await this.#db.query('DELETE FROM `tabItem Price` WHERE item_code = :code', { code });
    await this.#db.query('DELETE FROM `tabItem` WHERE name = :code', { code });
    await this.#db.query(
      "INSERT INTO `tabDeleted Document` (name, creation, modified, deleted_name, deleted_doctype, data) VALUES (CONCAT('DEL-', :code, '-', :modified), :modified, :modified, :code, 'Item', '{}')",
      { code, modified },
    );
  }

  /** What the store should show, computed from the raw rows (not through the source queries). */
  async truth(): Promise<Map<string, StoreTruth>> {
    const items = await this.#db.query<{ code: string; disabled: unknown; price: unknown }>('SELECT i.name AS code, i.disabled, p.price_list_rate AS price FROM `tabItem` i LEFT JOIN `tabItem Price` p ON p.item_code = i.name AND p.price_list = :list', {
      list: ERPNEXT_PRICE_LIST,
    });
    const bins = await this.#db.query<{ code: string; warehouse: string; actual: unknown; reserved: unknown }>('SELECT item_code AS code, warehouse, actual_qty AS actual, reserved_qty AS reserved FROM `tabBin`', {});
    const free = new Map<string, number>();
    for (const bin of bins) {
      if (!(ERPNEXT_WAREHOUSES as readonly string[]).includes(String(bin.warehouse))) continue;
      const code = String(bin.code);
      free.set(code, (free.get(code) ?? 0) + Number(bin.actual) - Number(bin.reserved));
    }
    const truth = new Map<string, StoreTruth>();
    for (const item of items) {
      if (Number(item.disabled) !== 0) continue;
      const code = String(item.code);
      // An item with no bin in the sold warehouses is in no query row: it shows 0, as an absent one.
      if (!free.has(code)) continue;
      truth.set(code, { Stock: Math.max(0, Math.floor(free.get(code)!)), Price: Number(item.price) });
    }
    return truth;
  }
}
