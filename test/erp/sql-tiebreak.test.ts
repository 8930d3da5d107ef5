/** The tiebreak advice of a SQL source, spelled with its own query's columns (issue 28, 6b). */
import { describe, expect, it } from 'vitest';

import { sqlTiebreak } from '../../src/erp/sql-tiebreak.js';

describe('sqlTiebreak', () => {
  it('spells the PostgreSQL row comparison with the query\'s cursor and code columns', () => {
    const query = `SELECT "Código" AS code, stock, changed_at AS cursor FROM erp.items
                   WHERE changed_at >= COALESCE(CAST(:cursor AS timestamp), '-infinity') ORDER BY cursor, code LIMIT :limit`;
    const advice = sqlTiebreak(query, 'postgres', false, {});
    expect(advice.pagesByKey).toBe(false);
    expect(advice.hint).toContain(
      "`WHERE … CAST(:cursor AS timestamp) IS NULL OR (changed_at, \"Código\") > (CAST(:cursor AS timestamp), COALESCE(CAST(:afterKey AS text), '')) ORDER BY changed_at, \"Código\"`",
    );
  });

  it('names the ORDER BY tiebreak as the key unique per row when it is not the code (MariaDB)', () => {
    const query = 'SELECT item_code AS code, price_list AS PriceListCode, modified AS `cursor` FROM `tabItem Price` ORDER BY modified, name DESC LIMIT :limit';
    expect(sqlTiebreak(query, 'mysql', false, {}).perRowHint).toContain(
      "`SELECT …, name AS pageKey … WHERE … (:cursor IS NULL OR modified > :cursor OR (modified = :cursor AND name > COALESCE(:afterKey, ''))) ORDER BY modified, name`",
    );
  });

  it("falls back to tabItem Price's name when the query orders by the code, and to a placeholder elsewhere", () => {
    const prices = 'SELECT item_code AS code, modified AS `cursor` FROM `tabItem Price` ORDER BY modified, item_code LIMIT :limit';
    expect(sqlTiebreak(prices, 'mysql', false, {}).perRowHint).toContain('name AS pageKey');
    const other = 'SELECT sku AS code, modified AS `cursor` FROM prices ORDER BY modified, sku LIMIT :limit';
    expect(sqlTiebreak(other, 'mysql', false, {}).perRowHint).toContain('<primary key> AS pageKey');
  });

  it('keeps the cursor alias of an aggregate (compared in HAVING) and takes the code from the mapping', () => {
    const query = 'SELECT b.item_code AS Articulo, GREATEST(MAX(b.modified), i.modified) AS `cursor` FROM `tabBin` b GROUP BY b.item_code ORDER BY `cursor`, Articulo LIMIT :limit';
    expect(sqlTiebreak(query, 'mysql', false, { Articulo: 'Code' }).hint).toContain(
      "(:cursor IS NULL OR `cursor` > :cursor OR (`cursor` = :cursor AND b.item_code > COALESCE(:afterKey, ''))) ORDER BY `cursor`, b.item_code",
    );
  });
});
