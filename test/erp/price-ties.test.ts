/**
 * Issue 28, 6b: ERPNext's `tabItem Price` holds one row per item and price list, and saving both lists
 * of 299 items at once stamps 598 rows with one `modified`. `sources test prices --limit 4` failed with
 * ERR_ERP_CURSOR ("more than 256 rows share cursor … raise the source limit") though the daemon, with
 * its limit of 1000, reads them; and the advice (page with :afterKey on the code) would skip the second
 * list's row of an item cut at a page's end. The preview now shows 4 records, and the advice names a key
 * unique per row (`name`, returned as pageKey), which pages the 598 rows whole.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { EXIT } from '../../src/cli/program.js';
import type { SourceTestResult } from '../../src/cli/sources-command.js';
import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { ChangeSource } from '../../src/erp/types.js';
import { ErpError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { drainSource } from '../../src/sync/drain-source.js';
import { cli } from '../helpers/cli.js';
import { testPrefix } from '../ops/helpers.js';
import { mariaScratch } from './databases.js';
import { createErpnextShape, ERPNEXT_CHANGES_QUERY_WITHOUT_AFTER_KEY, insertErpnextBins } from './erp-shapes.js';
import { sqlConfig } from './sources.js';

const ITEMS = 299;
const LISTS = ['Standard Selling', 'Wholesale'];
/** Both lists saved at once (Madrid wall time: 10:00:00.5 UTC), then one price changed a second later. */
const BULK = '2024-05-01 12:00:00.500000';
const LATER = '2024-05-01 12:00:01.000000';

/** The prices query of config/examples/price-lists.yaml: `>=` on the cursor, no :afterKey, ordered by modified, name. */
const PRICES_QUERY = `SELECT item_code AS code, price_list AS PriceListCode, price_list_rate AS price, modified AS \`cursor\`
  FROM \`tabItem Price\`
 WHERE price_list IN ('Standard Selling', 'Wholesale') AND (:cursor IS NULL OR modified >= :cursor)
 ORDER BY modified, name
 LIMIT :limit`;

let maria: Awaited<ReturnType<typeof mariaScratch>>;
let dir: string;
const opened: ChangeSource[] = [];

function source(changes: string, limit: number): ChangeSource {
  const created = createSource(sqlConfig({ name: 'prices', url: maria.url, timeZone: 'Europe/Madrid', changes, limit }), { fields: INVENTORY_FIELDS, logger: silentLogger() });
  opened.push(created);
  return created;
}

/** Why a first read of `erp` fails (it must fail with ERR_ERP_CURSOR). */
async function cursorFailure(erp: ChangeSource, limit: number): Promise<string> {
  const failure: unknown = await erp.readChanges(null, limit).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure, 'the read was expected to stop at the tie group').toBeInstanceOf(ErpError);
  expect((failure as ErpError).code).toBe('ERR_ERP_CURSOR');
  return (failure as ErpError).message;
}

beforeAll(async () => {
  maria = await mariaScratch();
  await createErpnextShape(maria.db);
  // ERPNext names an Item Price by a hash: the name order is not the item order.
  await maria.db.query(
    `INSERT INTO \`tabItem Price\` (name, modified, item_code, price_list, price_list_rate)
     SELECT LEFT(MD5(CONCAT(item, list)), 10), :bulk, item, list, price
       FROM (SELECT CONCAT('ITEM-', LPAD(seq, 6, '0')) AS item, l.list, seq + l.extra AS price
               FROM seq_1_to_${ITEMS}
               JOIN (SELECT 'Standard Selling' AS list, 0.5 AS extra UNION ALL SELECT 'Wholesale', 0.25) l) rows_`,
    { bulk: BULK },
  );
  await maria.db.query("UPDATE `tabItem Price` SET modified = :later, price_list_rate = 7.75 WHERE item_code = 'ITEM-000001' AND price_list = 'Wholesale'", { later: LATER });
  dir = await mkdtemp(join(tmpdir(), 'storesync-price-ties-'));
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((erp) => erp.close()));
});

afterAll(async () => {
  await maria.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('price rows sharing one modified (ERPNext tabItem Price, one row per item and list)', () => {
  it('sources test --limit 4 shows 4 records where the daemon (limit 1000) reads the group, instead of failing with ERR_ERP_CURSOR', async () => {
    const file = join(dir, 'prices.yaml');
    const lines = [
      'redis:',
      `  prefix: ${testPrefix()}`,
      'log:',
      '  level: silent',
      'inventory:',
      '  priceLists: [{ id: 1, code: Standard Selling }, { id: 2, code: Wholesale }]',
      '  sources:',
      '    - name: prices',
      '      kind: sql',
      `      url: ${maria.url}`,
      '      timeZone: Europe/Madrid',
      '      schedule: "0 0 0 1 1 *"',
      '      limit: 1000',
      `      changes: ${JSON.stringify(PRICES_QUERY)}`,
    ];
    await writeFile(file, `${lines.join('\n')}\n`);
    const run = await cli(['--config', file, 'sources', 'test', 'prices', '--limit', '4', '--json']);
    expect(run.stderr, 'the preview failed where the daemon reads').toBe('');
    expect(run.code).toBe(EXIT.ok);
    const [result] = (JSON.parse(run.stdout) as { sources: SourceTestResult[] }).sources;
    expect(result?.records).toHaveLength(4);
    // Every row is read (598 under the bulk's time, 1 a second later): the group is got past, not cut.
    expect(result).toMatchObject({ read: ITEMS * LISTS.length, refused: 0, cursor: '2024-05-01T10:00:01.000Z' });

    const text = await cli(['--config', file, 'sources', 'test', 'prices', '--limit', '4']);
    expect(text.stdout).toContain(`Records (4):  (${ITEMS * LISTS.length} rows read, at most 4 shown)`);
  });

  it('advises a key unique per row (name, as pageKey) when the code repeats in the group, never paging on the code', async () => {
    // A limit of 4 can get past 256 rows sharing a cursor: the 597 of the bulk stop it.
    const message = await cursorFailure(source(PRICES_QUERY, 4), 4);
    expect(message).toMatch(/more than 256 rows share cursor 2024-05-01T10:00:00\.500Z: their key is not unique per row \("ITEM-\d{6}": 2 rows\)/);
    expect(message).toContain('name AS pageKey');
    expect(message).toContain("(:cursor IS NULL OR modified > :cursor OR (modified = :cursor AND name > COALESCE(:afterKey, ''))) ORDER BY modified, name");
    expect(message, 'the advice pages on the code, which skips rows here').not.toMatch(/(code|item_code) > COALESCE\(:afterKey/);
  });

  it('pages the group whole in reads of 4 when the query follows the advice: every item in both lists, once', async () => {
    const paged = PRICES_QUERY.replace('modified AS `cursor`', 'modified AS `cursor`, name AS pageKey').replace(
      '(:cursor IS NULL OR modified >= :cursor)',
      "(:cursor IS NULL OR modified > :cursor OR (modified = :cursor AND name > COALESCE(:afterKey, '')))",
    );
    const seen: string[] = [];
    const result = await drainSource(source(paged, 4), {
      cursor: null,
      limit: 4,
      maxRounds: 10,
      queue: async (batch) => {
        seen.push(...batch.records.map((record) => `${String(record.fields.Code)} ${String(record.fields.PriceListCode)}`));
      },
      saveCursor: async () => undefined,
    });
    const expected = Array.from({ length: ITEMS }, (_, index) => LISTS.map((list) => `ITEM-${String(index + 1).padStart(6, '0')} ${list}`)).flat();
    expect(result.caughtUp).toBe(true);
    expect(seen.length, 'a row was read twice or skipped').toBe(expected.length);
    expect([...seen].sort()).toEqual(expected.sort());
  });

  it('advises paging on the source\'s own code column when it is unique per row (tabBin)', async () => {
    await insertErpnextBins(maria.db, { count: 300, actualQty: '1.000000000', modified: BULK });
    const message = await cursorFailure(source(ERPNEXT_CHANGES_QUERY_WITHOUT_AFTER_KEY, 3), 3);
    expect(message).toMatch(/more than 192 rows share cursor 2024-05-01T10:00:00\.500Z: page the changes query on \(cursor, key\) with :afterKey/);
    expect(message).toContain("(:cursor IS NULL OR modified > :cursor OR (modified = :cursor AND item_code > COALESCE(:afterKey, ''))) ORDER BY modified, item_code");
    expect(message).not.toContain('pageKey');
  });
});
