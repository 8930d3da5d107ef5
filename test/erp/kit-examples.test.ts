/**
 * config/examples/erpnext-kits.yaml and odoo-kits.yaml against tables of the real shape: ERPNext's
 * Product Bundles on MariaDB, Odoo's kit BoMs on PostgreSQL. The expected compositions are written out
 * by hand from the rows inserted (a disabled bundle, a normal BoM, an archived BoM left out; a BoM making
 * two units divided; a variant's own BoM winning over its template's).
 */
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadConfig, packageRoot } from '../../src/config/load.js';
import type { SqlSourceConfig } from '../../src/config/schema.js';
import { createSource, KIT_FIELDS } from '../../src/erp/index.js';
import { silentLogger } from '../../src/log.js';
import { checkKitRow } from '../../src/sync/inventory/listing/index.js';
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

describe('the kits examples on ERP-shaped tables', () => {
  it('erpnext-kits.yaml reads tabProduct Bundle and its items, leaving disabled bundles out', async () => {
    const scratch = await mariaScratch();
    try {
      await scratch.db.query(`CREATE TABLE \`tabProduct Bundle\` (
        name varchar(140) NOT NULL PRIMARY KEY,
        creation datetime(6) DEFAULT NULL,
        modified datetime(6) DEFAULT NULL,
        new_item_code varchar(140) DEFAULT NULL,
        description text,
        disabled int(1) NOT NULL DEFAULT 0,
        UNIQUE KEY new_item_code (new_item_code)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
      await scratch.db.query(`CREATE TABLE \`tabProduct Bundle Item\` (
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
      await scratch.db.query(`
        CREATE TABLE ${s}.mrp_bom (
          id serial PRIMARY KEY,
          code varchar,
          active boolean NOT NULL DEFAULT true,
          type varchar NOT NULL DEFAULT 'normal',
          product_tmpl_id integer NOT NULL REFERENCES ${s}.product_template(id),
          product_id integer REFERENCES ${s}.product_product(id),
          product_qty numeric NOT NULL DEFAULT 1,
          product_uom_id integer,
          sequence integer,
          company_id integer);
        CREATE TABLE ${s}.mrp_bom_line (
          id serial PRIMARY KEY,
          bom_id integer NOT NULL REFERENCES ${s}.mrp_bom(id) ON DELETE CASCADE,
          product_id integer NOT NULL REFERENCES ${s}.product_product(id),
          product_qty numeric NOT NULL DEFAULT 1,
          product_uom_id integer,
          sequence integer);
        INSERT INTO ${s}.product_template (id, name) VALUES (1, 'Mug'), (2, 'Box'), (3, 'Can'), (4, 'Tea leaf'), (5, 'Clay'),
          (10, 'Gift set'), (11, 'Six-pack'), (12, 'Tea box');
        INSERT INTO ${s}.product_product (id, default_code, product_tmpl_id) VALUES (1, 'MUG', 1), (2, 'BOX', 2), (3, 'CAN', 3), (4, 'LEAF', 4), (5, 'CLAY', 5),
          (10, 'GIFT', 10), (11, 'SIXPACK', 11), (12, 'TEA-S', 12), (13, 'TEA-L', 12);
        INSERT INTO ${s}.mrp_bom (id, type, product_tmpl_id, product_id, product_qty, sequence, active) VALUES
          (1, 'phantom', 10, NULL, 1, 1, true),
          (2, 'phantom', 11, NULL, 2, 1, true),
          (3, 'phantom', 12, NULL, 1, 1, true),
          (4, 'phantom', 12, 13, 1, 9, true),
          (5, 'normal', 1, NULL, 1, 1, true),
          (6, 'phantom', 2, NULL, 1, 1, false);
        INSERT INTO ${s}.mrp_bom_line (bom_id, product_id, product_qty) VALUES
          (1, 1, 2), (1, 2, 1),
          (2, 3, 12),
          (3, 4, 0.5),
          (4, 4, 1),
          (5, 5, 1),
          (6, 1, 1);`);
      // SIXPACK: 12 cans make 2 packs, 6 per pack; TEA-L has a BoM of its own (1), TEA-S its template's (0.5).
      expect(await compositions({ ...kitsSource('odoo-kits.yaml'), url: pgUrlIn(s) })).toEqual(['GIFT: 1 × BOX', 'GIFT: 2 × MUG', 'SIXPACK: 6 × CAN', 'TEA-L: 1 × LEAF', 'TEA-S: 0.5 × LEAF']);
    } finally {
      await odoo.close();
      await scratch.drop();
    }
  });
});
