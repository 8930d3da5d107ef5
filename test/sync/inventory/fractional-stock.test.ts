/**
 * Issue 22: "a stock of 5.5 (sold by the kg) refused the whole row, price included". ERPNext's tabBin
 * (`actual_qty decimal(21,9)`) joined with `tabItem Price` on MariaDB, polled and reconciled with each
 * `stockRounding`: the price always flows, and every refused row is counted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createSource, INVENTORY_FIELDS } from '../../../src/erp/index.js';
import type { ChangeSource } from '../../../src/erp/types.js';
import { type InventoryFlow, pollSource, startInventoryFlow } from '../../../src/sync/inventory/index.js';
import { reconcileWith } from '../../../src/sync/inventory/reconcile/reconcile.js';
import { openInventoryRuntime } from '../../../src/sync/inventory/runtime.js';
import { diffSource } from '../../../src/sync/inventory/snapshot/snapshot-diff.js';
import { jobSkus } from '../../../src/sync/inventory/types.js';
import { mariaScratch } from '../../erp/databases.js';
import { createErpnextShape, upsertErpnextBin } from '../../erp/erp-shapes.js';
import { createHarness, type Harness, writesOf } from './harness.js';

const NEVER = '0 0 0 1 1 *';
/** Free stock of one warehouse with the standard selling price, the newer of the two rows' times as cursor. */
const SELECT = `SELECT b.item_code AS code, b.actual_qty - b.reserved_qty AS stock, p.price_list_rate AS price`;
const FROM = `FROM \`tabBin\` b JOIN \`tabItem Price\` p ON p.item_code = b.item_code AND p.price_list = 'Standard Selling'
              WHERE b.warehouse = 'Stores - S'`;
const CHANGES = `${SELECT}, GREATEST(b.modified, p.modified) AS \`cursor\` ${FROM}
                 AND (:cursor IS NULL OR GREATEST(b.modified, p.modified) >= :cursor)
                 ORDER BY \`cursor\`, code LIMIT :limit`;
/** The snapshot also reads bins without an item code (a broken row the source refuses whole). */
const SNAPSHOT = `SELECT b.item_code AS code, b.actual_qty - b.reserved_qty AS stock, p.price_list_rate AS price
                  FROM \`tabBin\` b LEFT JOIN \`tabItem Price\` p ON p.item_code = b.item_code AND p.price_list = 'Standard Selling'`;

let h: Harness;
let maria: Awaited<ReturnType<typeof mariaScratch>>;
const flows: InventoryFlow[] = [];
const sources: ChangeSource[] = [];

function sourceConfig(stockRounding: 'floor' | 'round' | 'reject') {
  return { name: `erpnext-${stockRounding}`, kind: 'sql', url: maria.url, schedule: NEVER, changes: CHANGES, snapshot: SNAPSHOT, timeZone: 'Europe/Madrid', stockRounding };
}

beforeAll(async () => {
  h = await createHarness(['KG-1', 'KG-2'].map((Code) => ({ Code, Stock: 1, Price: 100 })));
  maria = await mariaScratch();
  await createErpnextShape(maria.db);
  await upsertErpnextBin(maria.db, 'KG-1', '5.500000000', '2024-05-01 12:00:00.000001');
  await upsertErpnextBin(maria.db, 'KG-2', '4.000000000', '2024-05-01 12:00:00.000002');
  await maria.db.query(`INSERT INTO \`tabBin\` (name, modified, item_code, warehouse, actual_qty) VALUES ('BIN-ORPHAN', '2024-05-01 12:00:00', NULL, 'Stores - S', 1)`);
  await maria.db.query(
    `INSERT INTO \`tabItem Price\` (name, modified, item_code, price_list, price_list_rate) VALUES
       ('P-1', '2024-05-01 11:00:00', 'KG-1', 'Standard Selling', 12.5), ('P-2', '2024-05-01 11:00:00', 'KG-2', 'Standard Selling', 20)`,
  );
});
afterEach(async () => {
  await Promise.all(flows.splice(0).map((flow) => flow.close(1000)));
  await Promise.all(sources.splice(0).map((source) => source.close()));
});
afterAll(async () => {
  await maria.drop();
  await h.close();
});

describe('a fractional stock from ERPNext', () => {
  it('with stockRounding reject: the poll refuses the Stock field alone, counts the row, and the price reaches the store', async () => {
    const deps = h.deps({ inventory: { sources: [sourceConfig('reject')] } });
    const flow = await startInventoryFlow(deps, { role: 'all' });
    flows.push(flow);
    const done = new Promise<void>((resolve) => {
      const left = new Set(['KG-1', 'KG-2']);
      flow.events.on('inventory:job:done', (event) => {
        left.delete(event.sku);
        if (left.size === 0) resolve();
      });
    });
    const report = await flow.poll('erpnext-reject');
    expect(report).toMatchObject({ read: 2, rejected: 1, queued: 2, cursor: '2024-05-01T10:00:00.000002Z' });
    await done;
    expect(writesOf(h.sim, 'KG-1').map((write) => write.fields)).toEqual([{ Price: 12.5 }]);
    expect(writesOf(h.sim, 'KG-2').map((write) => write.fields)).toEqual([{ Stock: 4, Price: 20 }]);
  });

  it('with the default floor: 5.5 becomes 5, nothing refused', async () => {
    const deps = h.deps({ inventory: { sources: [sourceConfig('floor')] } });
    const rt = openInventoryRuntime(deps);
    const source = createSource(deps.config.inventory.sources[0]!, { fields: INVENTORY_FIELDS, logger: deps.logger });
    sources.push(source);
    try {
      expect(await pollSource(rt, source, { limit: 10 })).toMatchObject({ read: 2, rejected: 0 });
      expect((await rt.state.read('KG-1')).erp.get('Stock')?.value).toBe(5);
      const queued = (await rt.queue.getJobs(['waiting', 'prioritized'])).flatMap((job) => jobSkus(job.data));
      expect(queued).toContain('KG-1');
    } finally {
      await rt.close();
    }
  });

  it('the reconcile counts the rows refused by the source (no item code) and the Stock refused alone, and still compares the price', async () => {
    const deps = h.deps({ inventory: { sources: [sourceConfig('reject')] } });
    const rt = openInventoryRuntime(deps, { readOnly: true });
    const source = createSource(deps.config.inventory.sources[0]!, { fields: INVENTORY_FIELDS, logger: deps.logger });
    sources.push(source);
    try {
      const report = await reconcileWith(rt, [source], { dryRun: true });
      // KG-1 (Stock refused alone), the orphan bin (no Code): 2 of the 3 rows.
      expect(report).toMatchObject({ erpRecords: 3, rejected: 2 });
    } finally {
      await rt.close();
    }
  });

  it('the snapshot diff counts the row whose Stock alone was refused and the row the source refused whole', async () => {
    const deps = h.deps({ inventory: { sources: [{ ...sourceConfig('reject'), name: 'erpnext-diff' }] } });
    const rt = openInventoryRuntime(deps);
    const source = createSource(deps.config.inventory.sources[0]!, { fields: INVENTORY_FIELDS, logger: deps.logger });
    sources.push(source);
    try {
      const report = await diffSource(rt, source, { vanished: { action: 'keep', maxFraction: 0.05 }, otherSources: [] });
      expect(report).toMatchObject({ read: 3, refused: 2 });
      // KG-1's price still flows: it is queued with KG-2.
      expect(report.queued).toBe(2);
    } finally {
      await rt.close();
    }
  });
});
