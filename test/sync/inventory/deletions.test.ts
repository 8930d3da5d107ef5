/**
 * A deletion is versioned by its own cursor (src/sync/inventory/deletions.ts): on real PostgreSQL (a stock
 * table with a change column and a deletion log, as ERPNext keeps `tabDeleted Document`), real Redis and
 * the simulator over HTTP, a SKU is deleted, comes back with a newer change, and is deleted again, all
 * polled without a snapshot diff in between (the diff would clear the first deletion's record): the
 * second deletion must zero it again, and a deletion older than its newest change must not.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { PG_URL, pgScratch } from '../../erp/databases.js';
import { NEVER, type Scenario, startScenario } from '../../helpers/erp-scenario.js';
import { createHarness, type Harness } from './harness.js';

let scratch: Awaited<ReturnType<typeof pgScratch>>;
let h: Harness;
let scenario: Scenario;
/** ERP timestamps, a second apart, all within the source's overlap of the newest. */
let clock = Date.now() - 40_000;
const stamp = (): Date => new Date((clock += 1000));

const stock = (code: string): unknown => h.sim.state.items.get(code)?.item.Stock;

async function setStock(code: string, qty: number): Promise<void> {
  await scratch.db.query(
    `INSERT INTO ${scratch.schema}.items (code, qty, modified) VALUES (:code, :qty, :at) ON CONFLICT (code) DO UPDATE SET qty = EXCLUDED.qty, modified = EXCLUDED.modified`,
    { code, qty, at: stamp() },
  );
}

async function logDeletion(code: string, at: Date = stamp()): Promise<void> {
  await scratch.db.query(`INSERT INTO ${scratch.schema}.deleted (code, deleted_at) VALUES (:code, :at)`, { code, at });
}

beforeEach(async () => {
  scratch = await pgScratch();
  await scratch.db.query(`CREATE TABLE ${scratch.schema}.items (code text PRIMARY KEY, qty int NOT NULL, modified timestamptz NOT NULL)`);
  await scratch.db.query(`CREATE TABLE ${scratch.schema}.deleted (code text NOT NULL, deleted_at timestamptz NOT NULL)`);
  h = await createHarness(['DL-1', 'DL-2'].map((Code) => ({ Code, Stock: 1, Price: 10 })));
  scenario = await startScenario(h, {
    inventory: {
      sources: [
        {
          name: 'erp',
          kind: 'sql',
          url: PG_URL,
          schedule: NEVER,
          changes: `SELECT code AS "Code", qty AS "Stock", modified AS cursor FROM ${scratch.schema}.items
            WHERE CAST(:cursor AS timestamptz) IS NULL OR modified >= :cursor ORDER BY modified, code LIMIT :limit`,
          deletions: `SELECT code AS "Code", deleted_at AS cursor FROM ${scratch.schema}.deleted
            WHERE CAST(:cursor AS timestamptz) IS NULL OR deleted_at >= :cursor ORDER BY deleted_at, code LIMIT :limit`,
        },
      ],
    },
  });
});

afterEach(async () => {
  await scenario?.close();
  await h?.close();
  await scratch?.drop();
});

describe('deletions polled with the changes', () => {
  it('zeroes a SKU deleted, brought back by a newer change and deleted again; a deletion older than its newest change does not', async () => {
    await setStock('DL-1', 5);
    await setStock('DL-2', 6);
    await scenario.poll('erp');
    expect([stock('DL-1'), stock('DL-2')]).toEqual([5, 6]);

    await logDeletion('DL-1');
    await scenario.poll('erp');
    expect(stock('DL-1'), 'the first deletion zeroes DL-1').toBe(0);

    await setStock('DL-1', 8);
    await scenario.poll('erp');
    expect(stock('DL-1'), 'a change newer than the deletion brings DL-1 back').toBe(8);

    await logDeletion('DL-1');
    await scenario.poll('erp');
    expect(stock('DL-1'), 'a second, newer deletion must zero DL-1 again (the first one\'s record must not hide it)').toBe(0);

    await setStock('DL-1', 9);
    await scenario.poll('erp');
    expect(stock('DL-1')).toBe(9);
    // A deletion stamped before that change, logged late (read by the overlap): DL-1 stays.
    await logDeletion('DL-1', new Date(clock - 500));
    await scenario.poll('erp');
    expect(stock('DL-1'), 'a deletion older than the newest change zeroed DL-1').toBe(9);
    expect(stock('DL-2')).toBe(6);
  });
});
