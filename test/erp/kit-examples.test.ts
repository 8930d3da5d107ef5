/**
 * config/examples/erpnext-kits.yaml and odoo-kits.yaml against tables of the real shape: ERPNext's
 * Product Bundles on MariaDB, Odoo's kit BoMs on PostgreSQL. The expected compositions are written out
 * by hand from the rows inserted (a disabled bundle, a normal BoM, an archived BoM left out; a BoM making
 * two units divided; a variant's own BoM winning over its template's), and their `changes` queries the
 * same way: every row of each kit changed since the cursor at the kit's cursor, a disabled, emptied,
 * deleted or archived kit as one row without component and quantity (`kitBatch` makes it null).
 */
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadConfig, packageRoot } from '../../src/config/load.js';
import type { SqlSourceConfig } from '../../src/config/schema.js';
import { createSource, KIT_FIELDS } from '../../src/erp/index.js';
import { silentLogger } from '../../src/log.js';
import { checkKitRow, kitBatch } from '../../src/sync/inventory/listing/index.js';
import { mariaScratch, PG_URL, pgScratch } from './databases.js';
import { pgUrlIn } from './example-sources.js';
import { OdooErp } from './odoo-erp.js';

/** The kits source of `config/examples/<file>`. */
function kitsSource(file: string): SqlSourceConfig {
  const config = loadConfig({ configFile: join(packageRoot(), 'config', 'examples', file), env: {} });
  const source = config.inventory.kits[0];
  if (source?.kind !== 'sql') throw new Error(`config/examples/${file}: expected a sql kits source`);
  return source;
}

/** Every composition row of a source's snapshot as `KIT: quantity × COMPONENT`, sorted; a refused row fails the test. */
async function compositions(config: SqlSourceConfig): Promise<string[]> {
  const source = createSource(config, { fields: KIT_FIELDS, logger: silentLogger() });
  const rows: string[] = [];
  try {
    for await (const chunk of source.snapshot?.() ?? []) {
      expect(chunk.rejected ?? [], 'rows the source refused').toEqual([]);
      for (const record of chunk) {
        const row = checkKitRow(record.fields, record.ref);
        if (Array.isArray(row)) throw new Error(`refused: ${JSON.stringify(row)}`);
        rows.push(`${row.kit}: ${row.quantity} × ${row.component}`);
      }
    }
  } finally {
    await source.close();
  }
  return rows.sort();
}

/**
 * Odoo's mrp_bom and mrp_bom_line (the columns the queries read) in `schema`, with products and BoMs:
 * GIFT (template 10: 2 MUG + 1 BOX), SIXPACK (template 11: 12 CAN make 2), TEA-S and TEA-L (template 12:
 * 0.5 LEAF; TEA-L's own BoM 4: 1 LEAF), a normal BoM of MUG (5) and an archived kit BoM of BOX (6).
 */
async function odooBoms(db: { query(sql: string): Promise<unknown> }, schema: string): Promise<void> {
  await db.query(`
    CREATE TABLE ${schema}.mrp_bom (
      id serial PRIMARY KEY,
      code varchar,
      active boolean NOT NULL DEFAULT true,
      type varchar NOT NULL DEFAULT 'normal',
      product_tmpl_id integer NOT NULL REFERENCES ${schema}.product_template(id),
      product_id integer REFERENCES ${schema}.product_product(id),
      product_qty numeric NOT NULL DEFAULT 1,
      product_uom_id integer,
      sequence integer,
      company_id integer,
      write_date timestamp without time zone);
    CREATE TABLE ${schema}.mrp_bom_line (
      id serial PRIMARY KEY,
      bom_id integer NOT NULL REFERENCES ${schema}.mrp_bom(id) ON DELETE CASCADE,
      product_id integer NOT NULL REFERENCES ${schema}.product_product(id),
      product_qty numeric NOT NULL DEFAULT 1,
      product_uom_id integer,
      sequence integer,
      write_date timestamp without time zone);
    INSERT INTO ${schema}.product_template (id, name) VALUES (1, 'Mug'), (2, 'Box'), (3, 'Can'), (4, 'Tea leaf'), (5, 'Clay'),
      (10, 'Gift set'), (11, 'Six-pack'), (12, 'Tea box');
    INSERT INTO ${schema}.product_product (id, default_code, product_tmpl_id) VALUES (1, 'MUG', 1), (2, 'BOX', 2), (3, 'CAN', 3), (4, 'LEAF', 4), (5, 'CLAY', 5),
      (10, 'GIFT', 10), (11, 'SIXPACK', 11), (12, 'TEA-S', 12), (13, 'TEA-L', 12);
    INSERT INTO ${schema}.mrp_bom (id, type, product_tmpl_id, product_id, product_qty, sequence, active) VALUES
      (1, 'phantom', 10, NULL, 1, 1, true),
      (2, 'phantom', 11, NULL, 2, 1, true),
      (3, 'phantom', 12, NULL, 1, 1, true),
      (4, 'phantom', 12, 13, 1, 9, true),
      (5, 'normal', 1, NULL, 1, 1, true),
      (6, 'phantom', 2, NULL, 1, 1, false);
    INSERT INTO ${schema}.mrp_bom_line (bom_id, product_id, product_qty) VALUES
      (1, 1, 2), (1, 2, 1),
      (2, 3, 12),
      (3, 4, 0.5),
      (4, 4, 1),
      (5, 5, 1),
      (6, 1, 1);`);
}

/** ERPNext's `tabProduct Bundle`, `tabProduct Bundle Item` and `tabDeleted Document`, as ERPNext creates them. */
async function erpnextBundleTables(db: { query(sql: string): Promise<unknown> }): Promise<void> {
  await db.query(`CREATE TABLE \`tabProduct Bundle\` (
      name varchar(140) NOT NULL PRIMARY KEY,
      creation datetime(6) DEFAULT NULL,
      modified datetime(6) DEFAULT NULL,
      new_item_code varchar(140) DEFAULT NULL,
      description text,
      disabled int(1) NOT NULL DEFAULT 0,
      UNIQUE KEY new_item_code (new_item_code)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await db.query(`CREATE TABLE \`tabProduct Bundle Item\` (
      name varchar(140) NOT NULL PRIMARY KEY,
      creation datetime(6) DEFAULT NULL,
      modified datetime(6) DEFAULT NULL,
      parent varchar(140) DEFAULT NULL,
      parentfield varchar(140) DEFAULT NULL,
      parenttype varchar(140) DEFAULT NULL,
      idx int(8) NOT NULL DEFAULT 0,
      item_code varchar(140) DEFAULT NULL,
      qty decimal(21,9) NOT NULL DEFAULT 0.000000000,
      description text,
      rate decimal(21,9) NOT NULL DEFAULT 0.000000000,
      uom varchar(140) DEFAULT NULL,
      KEY parent (parent)
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
}

/**
 * The changes query's rows from `cursor` (null: the first poll; otherwise from the cursor itself, no
 * overlap) as `KIT @cursor: quantity × COMPONENT` (`KIT @cursor: none` for a row without component and
 * quantity) in the order read, and what `kitBatch` makes of them (kit → components, or null).
 */
async function changes(config: SqlSourceConfig, cursor: string | null): Promise<{ rows: string[]; kits: Record<string, string[] | null> }> {
  const source = createSource(config, { fields: KIT_FIELDS, logger: silentLogger() });
  try {
    const batch = await source.readChanges(cursor, 100, { overlap: false });
    expect(batch.rejected, 'rows the source refused').toEqual([]);
    // In the order read (cursor, kit); a kit's own rows come in no set order: sorted among themselves.
    const groups: string[][] = [];
    let last: unknown;
    for (const { fields, cursor: at } of batch.records) {
      if (groups.length === 0 || fields.kit !== last) groups.push([]);
      last = fields.kit;
      groups.at(-1)!.push(`${String(fields.kit)} @${String(at)}: ${fields.component === undefined ? 'none' : `${String(fields.quantity)} × ${String(fields.component)}`}`);
    }
    const rows = groups.flatMap((group) => group.sort());
    const { changes: byKit, refused } = kitBatch(batch, false);
    expect(refused).toEqual([]);
    const kits = Object.fromEntries([...byKit].map(([kit, components]) => [kit, components === null ? null : components.map((c) => `${c.quantity} × ${c.component}`).sort()]));
    return { rows, kits };
  } finally {
    await source.close();
  }
}

describe('the kits examples on ERP-shaped tables', () => {
  it('erpnext-kits.yaml reads tabProduct Bundle and its items, leaving disabled bundles out', async () => {
    const scratch = await mariaScratch();
    try {
      await erpnextBundleTables(scratch.db);
      await scratch.db.query(`INSERT INTO \`tabProduct Bundle\` (name, new_item_code, disabled) VALUES
        ('GIFT', 'GIFT', 0), ('SIXPACK', 'SIXPACK', 0), ('HALF', 'HALF', 0), ('OLD', 'OLD', 1)`);
      await scratch.db.query(`INSERT INTO \`tabProduct Bundle Item\` (name, parent, parentfield, parenttype, idx, item_code, qty, uom) VALUES
        ('pbi1', 'GIFT', 'items', 'Product Bundle', 1, 'MUG', 2.000000000, 'Nos'),
        ('pbi2', 'GIFT', 'items', 'Product Bundle', 2, 'BOX', 1.000000000, 'Nos'),
        ('pbi3', 'SIXPACK', 'items', 'Product Bundle', 1, 'CAN', 6.000000000, 'Nos'),
        ('pbi4', 'HALF', 'items', 'Product Bundle', 1, 'FLOUR', 0.500000000, 'Kg'),
        ('pbi5', 'OLD', 'items', 'Product Bundle', 1, 'MUG', 1.000000000, 'Nos')`);
      expect(await compositions({ ...kitsSource('erpnext-kits.yaml'), url: scratch.url })).toEqual(['GIFT: 1 × BOX', 'GIFT: 2 × MUG', 'HALF: 0.5 × FLOUR', 'SIXPACK: 6 × CAN']);
    } finally {
      await scratch.drop();
    }
  });

  it('odoo-kits.yaml reads phantom mrp_bom lines per unit made, by default_code, a variant\'s own BoM first', async () => {
    const scratch = await pgScratch();
    const odoo = await OdooErp.create(scratch.db, scratch.schema, PG_URL);
    const s = scratch.schema;
    try {
      await odooBoms(scratch.db, s);
      // SIXPACK: 12 cans make 2 packs, 6 per pack; TEA-L has a BoM of its own (1), TEA-S its template's (0.5).
      expect(await compositions({ ...kitsSource('odoo-kits.yaml'), url: pgUrlIn(s) })).toEqual(['GIFT: 1 × BOX', 'GIFT: 2 × MUG', 'SIXPACK: 6 × CAN', 'TEA-L: 1 × LEAF', 'TEA-S: 0.5 × LEAF']);
    } finally {
      await odoo.close();
      await scratch.drop();
    }
  });

  it('erpnext-kits.yaml\'s changes query reads every row of each bundle changed since the cursor; disabled, emptied and deleted bundles as empty rows', async () => {
    const scratch = await mariaScratch();
    try {
      await erpnextBundleTables(scratch.db);
      // Wall clock of Europe/Madrid (the example's timeZone), UTC+1 in January: 10:00 there is 09:00Z.
      await scratch.db.query(`INSERT INTO \`tabProduct Bundle\` (name, new_item_code, disabled, modified) VALUES
        ('GIFT', 'GIFT', 0, '2026-01-05 10:00:00'), ('SIXPACK', 'SIXPACK', 0, '2026-01-05 10:01:00'),
        ('OLD', 'OLD', 1, '2026-01-05 10:02:00'), ('EMPTY', 'EMPTY', 0, '2026-01-05 10:03:00')`);
      await scratch.db.query(`INSERT INTO \`tabProduct Bundle Item\` (name, parent, parentfield, parenttype, idx, item_code, qty, uom, modified) VALUES
        ('pbi1', 'GIFT', 'items', 'Product Bundle', 1, 'MUG', 2.000000000, 'Nos', '2026-01-05 10:00:00'),
        ('pbi2', 'GIFT', 'items', 'Product Bundle', 2, 'BOX', 1.000000000, 'Nos', '2026-01-05 10:00:00'),
        ('pbi3', 'SIXPACK', 'items', 'Product Bundle', 1, 'CAN', 6.000000000, 'Nos', '2026-01-05 10:01:00'),
        ('pbi5', 'OLD', 'items', 'Product Bundle', 1, 'MUG', 1.000000000, 'Nos', '2026-01-05 10:02:00')`);
      await scratch.db.query(`INSERT INTO \`tabDeleted Document\` (name, deleted_name, deleted_doctype, modified) VALUES
        ('dd1', 'GONE', 'Product Bundle', '2026-01-05 10:04:00'), ('dd2', 'MUG-OLD', 'Item', '2026-01-05 10:04:30')`);
      const config = { ...kitsSource('erpnext-kits.yaml'), url: scratch.url };
      const first = await changes(config, null);
      expect(first.rows).toEqual([
        'GIFT @2026-01-05T09:00:00.000Z: 1 × BOX',
        'GIFT @2026-01-05T09:00:00.000Z: 2 × MUG',
        'SIXPACK @2026-01-05T09:01:00.000Z: 6 × CAN',
        'OLD @2026-01-05T09:02:00.000Z: none',
        'EMPTY @2026-01-05T09:03:00.000Z: none',
        'GONE @2026-01-05T09:04:00.000Z: none',
      ]);
      expect(first.kits).toEqual({ GIFT: ['1 × BOX', '2 × MUG'], SIXPACK: ['6 × CAN'], OLD: null, EMPTY: null, GONE: null });
      // GIFT's MUG row edited in ERPNext: the item row and its parent are saved, both stamped 10:10.
      await scratch.db.query("UPDATE `tabProduct Bundle Item` SET qty = 3, modified = '2026-01-05 10:10:00' WHERE name = 'pbi1'");
      await scratch.db.query("UPDATE `tabProduct Bundle` SET modified = '2026-01-05 10:10:00' WHERE name = 'GIFT'");
      const next = await changes(config, '2026-01-05T09:04:00.000Z');
      // From the cursor, inclusive: GONE again (harmless), then GIFT whole.
      expect(next.kits).toEqual({ GONE: null, GIFT: ['1 × BOX', '3 × MUG'] });
    } finally {
      await scratch.drop();
    }
  });

  it('odoo-kits.yaml\'s changes query reads each kit product whose BoMs or lines changed, whole, and one left without a kit BoM as an empty row', async () => {
    const scratch = await pgScratch();
    const odoo = await OdooErp.create(scratch.db, scratch.schema, PG_URL);
    const s = scratch.schema;
    try {
      await odooBoms(scratch.db, s);
      // Odoo stamps write_date in UTC. BoM n written at 10:0n, its lines with it.
      await scratch.db.query(`UPDATE ${s}.mrp_bom SET write_date = TIMESTAMP '2026-01-05 10:00:00' + id * INTERVAL '1 minute'`);
      await scratch.db.query(`UPDATE ${s}.mrp_bom_line l SET write_date = b.write_date FROM ${s}.mrp_bom b WHERE b.id = l.bom_id`);
      const config = { ...kitsSource('odoo-kits.yaml'), url: pgUrlIn(s) };
      const first = await changes(config, null);
      // TEA-S has its template's BoM 3 (10:03); TEA-L also its own BoM 4 (10:04): its latest. MUG's normal
      // BoM 5 and BOX's archived kit BoM 6 touch products that are no kit: empty rows (a removal of nothing).
      expect(first.rows).toEqual([
        'GIFT @2026-01-05T10:01:00.000Z: 1 × BOX',
        'GIFT @2026-01-05T10:01:00.000Z: 2 × MUG',
        'SIXPACK @2026-01-05T10:02:00.000Z: 6 × CAN',
        'TEA-S @2026-01-05T10:03:00.000Z: 0.5 × LEAF',
        'TEA-L @2026-01-05T10:04:00.000Z: 1 × LEAF',
        'MUG @2026-01-05T10:05:00.000Z: none',
        'BOX @2026-01-05T10:06:00.000Z: none',
      ]);
      expect(first.kits).toEqual({ GIFT: ['1 × BOX', '2 × MUG'], SIXPACK: ['6 × CAN'], 'TEA-S': ['0.5 × LEAF'], 'TEA-L': ['1 × LEAF'], MUG: null, BOX: null });
      // A line written alone (its BoM not): GIFT's MUG 2 → 3 at 10:10. SIXPACK's BoM archived at 10:11.
      await scratch.db.query(`UPDATE ${s}.mrp_bom_line SET product_qty = 3, write_date = '2026-01-05 10:10:00' WHERE bom_id = 1 AND product_id = 1`);
      await scratch.db.query(`UPDATE ${s}.mrp_bom SET active = false, write_date = '2026-01-05 10:11:00' WHERE id = 2`);
      const next = await changes(config, '2026-01-05T10:07:00.000Z');
      expect(next.rows).toEqual(['GIFT @2026-01-05T10:10:00.000Z: 1 × BOX', 'GIFT @2026-01-05T10:10:00.000Z: 3 × MUG', 'SIXPACK @2026-01-05T10:11:00.000Z: none']);
      expect(next.kits).toEqual({ GIFT: ['1 × BOX', '3 × MUG'], SIXPACK: null });
    } finally {
      await odoo.close();
      await scratch.drop();
    }
  });
});
