import { readFile } from 'node:fs/promises';

import { describe, expect, it } from 'vitest';

import { addColumnStatement, createStatements, SALE_COLUMNS, SALE_ITEM_COLUMNS } from '../../../src/erp/sinks/interface-tables.js';

const names = { schema: 'erp', sales: 'storesync_sales', items: 'storesync_sale_items' };

describe('interface table DDL', () => {
  it('types timestamps with a zone on PostgreSQL and as UTC DATETIME on MariaDB', () => {
    const [pgSales] = createStatements('postgres', names);
    const [mySales] = createStatements('mysql', names);
    expect(pgSales).toMatch(/^CREATE TABLE IF NOT EXISTS "erp"\."storesync_sales" \(/);
    expect(pgSales).toContain('"creation_date" TIMESTAMPTZ NULL');
    expect(pgSales).toContain('"sale_json" JSONB NOT NULL');
    expect(mySales).toMatch(/^CREATE TABLE IF NOT EXISTS `erp`\.`storesync_sales` \(/);
    expect(mySales).toContain('`creation_date` DATETIME(3) NULL');
    expect(mySales).toContain('`sale_json` LONGTEXT NOT NULL');
    expect(mySales).toMatch(/ENGINE=InnoDB DEFAULT CHARSET=utf8mb4/);
  });

  it('keys sales by site and sale, lines by site, sale and line, with lines deleted along their sale', () => {
    const [sales, items, index] = createStatements('postgres', names);
    expect(sales).toContain('PRIMARY KEY ("site_id", "sale_id")');
    expect(items).toContain('PRIMARY KEY ("site_id", "sale_id", "line")');
    expect(items).toContain('REFERENCES "erp"."storesync_sales" ("site_id", "sale_id") ON DELETE CASCADE');
    expect(index).toBe('CREATE INDEX IF NOT EXISTS "storesync_sales_erp_status_idx" ON "erp"."storesync_sales" ("erp_status", "received_at")');
  });

  it('adds a missing column as nullable so existing rows stay valid', () => {
    const saleJson = SALE_COLUMNS.find((c) => c.name === 'sale_json')!;
    expect(addColumnStatement('mysql', { sales: 's', items: 'i' }, 'sales', saleJson)).toBe('ALTER TABLE `s` ADD COLUMN IF NOT EXISTS `sale_json` LONGTEXT NULL');
  });
});

describe('the README section on the interface tables', () => {
  it('documents every column of both tables, in table order', async () => {
    const text = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const section = (title: string): string[] => {
      const start = text.indexOf(`## \`${title}\``);
      const end = text.indexOf('\n#', start + 1);
      const body = text.slice(start, end === -1 ? undefined : end);
      return [...body.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!);
    };
    expect(section('storesync_sales')).toEqual(SALE_COLUMNS.map((c) => c.name));
    expect(section('storesync_sale_items')).toEqual(SALE_ITEM_COLUMNS.map((c) => c.name));
  });
});
