/**
 * End-to-end scenarios on an ERPNext-shaped MariaDB database (test/erp/erpnext-erp.ts), written the way
 * ERPNext writes (`modified` in the site's local time with microseconds, `decimal(21,9)` quantities,
 * `disabled` items, deletions): each ends with the store equal to the ERP's truth (computed from the raw
 * rows), or held by the guard where that is the point. Real Redis, real MariaDB, the simulator over HTTP.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { mariaScratch } from '../../erp/databases.js';
import { ErpnextErp, type ErpnextItem, localStamp } from '../../erp/erpnext-erp.js';
import { exampleSqlSource } from '../../erp/example-sources.js';
import { NEVER, type Scenario, startScenario, storeMismatches } from '../../helpers/erp-scenario.js';
import { createHarness, type Harness } from './harness.js';

const ZONE = 'Europe/Madrid';
const CODES = Array.from({ length: 12 }, (_, i) => `EN-${String(i + 1).padStart(3, '0')}`);
const ITEMS: ErpnextItem[] = CODES.map((code, i) => ({
  code,
  price: 20 + i,
  bins: [
    { warehouse: 'Stores - S', actualQty: `${8 + i}.000000000`, reservedQty: `${i % 2}.000000000` },
    // A fraction (sold by the kg) is floored (stockRounding's default).
    { warehouse: 'Finished Goods - S', actualQty: '3.400000000' },
    // A warehouse that is not sold: never counted.
    { warehouse: 'Work In Progress - S', actualQty: '40.000000000' },
  ],
}));

let scratch: Awaited<ReturnType<typeof mariaScratch>>;
let erp: ErpnextErp;
let h: Harness;
let scenario: Scenario;

/** The source of config/examples/erpnext.yaml on the scratch database, polled and diffed by hand. */
const ERPNEXT = exampleSqlSource('erpnext.yaml');
function erpnextSource(overrides: Record<string, unknown> = {}) {
  return { ...ERPNEXT, url: scratch.url, schedule: NEVER, diff: { schedule: NEVER }, ...overrides };
}

async function start(source = erpnextSource()): Promise<void> {
  scenario = await startScenario(h, { inventory: { sources: [source], reconcile: { orphans: 'zero' } } });
}

async function mismatches(): Promise<string[]> {
  return storeMismatches(h.sim, await erp.truth(), CODES);
}

beforeEach(async () => {
  scratch = await mariaScratch();
  erp = await ErpnextErp.create(scratch.db, { zone: ZONE });
  // The catalogue was set up three hours ago.
  await erp.createItems(ITEMS, localStamp(Date.now() - 3 * 3_600_000, ZONE, 250));
  h = await createHarness(CODES.map((Code) => ({ Code, Stock: 0, Price: 1 })));
});

afterEach(async () => {
  await scenario?.close();
  await h.close();
  await scratch.drop();
});

describe('ERPNext (MariaDB) end to end', () => {
  it('publishes free stock summed over the sold warehouses and the selling price on the first poll', async () => {
    await start();
    expect(await scenario.poll('erpnext')).toMatchObject({ read: CODES.length, rejected: 0 });
    expect(await mismatches()).toEqual([]);
    expect(h.sim.state.items.get('EN-002')?.item).toMatchObject({ Stock: 9 - 1 + 3, Price: 21 });
  });

  it('follows stock transactions and price changes written in local time with microseconds', async () => {
    await start();
    await scenario.poll('erpnext');
    await erp.setBin('EN-001', 'Stores - S', '2.000000000');
    await erp.setBin('EN-001', 'Finished Goods - S', '1.000000000');
    await erp.setPrice('EN-003', 99.5);
    await scenario.poll('erpnext');
    expect(await mismatches()).toEqual([]);
    await erp.setBin('EN-004', 'Stores - S', '30.000000000');
    await scenario.poll('erpnext');
    expect(await mismatches()).toEqual([]);
  });

  it('fixes by the reconcile a bin changed by raw SQL without its modified', async () => {
    await start();
    await scenario.poll('erpnext');
    // A later transaction moves the cursor past the catalogue's rows (the overlap re-reads rows near the cursor).
    await erp.setBin('EN-001', 'Stores - S', '5.000000000');
    await scenario.poll('erpnext');
    await erp.rawSetBin('EN-005', 'Stores - S', '0.000000000');
    expect((await scenario.poll('erpnext')).queued).toBe(0);
    expect(await mismatches()).toEqual(['EN-005: Stock 15 on the store, 3 in the ERP']);
    expect(await scenario.reconcile()).toMatchObject({ differences: 1, onlyOnStore: 0 });
    expect(await mismatches()).toEqual([]);
  });

  it('zeroes a deleted item on the next poll (tabDeleted Document) and a disabled one by the snapshot diff', async () => {
    await start();
    await scenario.poll('erpnext');
    await scenario.diff('erpnext');
    await erp.deleteItem('EN-007');
    await erp.disable('EN-006');
    await scenario.poll('erpnext');
    expect(await mismatches()).toEqual(['EN-006: Stock 15 on the store, 0 in the ERP']);
    expect(await scenario.diff('erpnext')).toMatchObject({ vanished: 1, held: 0 });
    expect(await mismatches()).toEqual([]);
  });

  it('loses no write of the DST fall-back hour, when local 02:10 comes after 02:30', async () => {
    // 25 October 2026, Europe/Madrid: 03:00 CEST becomes 02:00 CET (01:00 UTC).
    for (const table of ['tabItem', 'tabItem Price', 'tabBin']) await scratch.db.query(`UPDATE \`${table}\` SET modified = '2026-10-24 12:00:00.000250'`);
    erp.clock = () => Date.parse('2026-10-25T00:30:00Z');
    await start();
    await scenario.poll('erpnext');
    await erp.setBin('EN-001', 'Stores - S', '4.000000000');
    await scenario.poll('erpnext');
    erp.clock = () => Date.parse('2026-10-25T01:10:00Z');
    expect(erp.now().startsWith('2026-10-25 02:10:00')).toBe(true);
    await erp.setBin('EN-002', 'Stores - S', '1.000000000');
    await scenario.poll('erpnext');
    expect(await mismatches()).toEqual([]);
  });

  it('zeroes a disabled item and a deleted one by the reconcile', async () => {
    await start();
    await scenario.poll('erpnext');
    await erp.disable('EN-006');
    await erp.deleteItem('EN-007');
    await scenario.poll('erpnext');
    // The deletions query zeroed EN-007 already; the reconcile finds both on the store only.
    expect(await mismatches()).toHaveLength(1);
    const report = await scenario.reconcile();
    expect([...report.onlyOnStoreSample].sort()).toEqual(['EN-006', 'EN-007']);
    expect(await mismatches()).toEqual([]);
  });

  it('holds everything when the snapshot query is broken and returns nothing', async () => {
    // A warehouse renamed in ERPNext and not in the query: it runs and returns no row.
    await start(erpnextSource({ snapshot: ERPNEXT.snapshot!.replace("'Stores - S', 'Finished Goods - S'", "'Stores - OLD'") }));
    await scenario.poll('erpnext');
    const report = await scenario.reconcile();
    expect(report).toMatchObject({ erpRecords: 0, orphans: { held: CODES.length, queued: 0 } });
    expect(await mismatches()).toEqual([]);
  });
});
