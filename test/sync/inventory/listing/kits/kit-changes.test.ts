/**
 * A sql kits source's `changes` query (issue 26), end to end: a PostgreSQL ERP (a stock table; bundles
 * with a `disabled` flag and a `modified` stamp, and their items), Redis and the simulator over HTTP. The
 * change feed moves a kit's figure at its next poll, with the snapshot never re-read (schedule NEVER);
 * a disabled bundle leaves the catalog; rows sharing one cursor, cut by the limit or committed after a
 * poll read their cursor, are not lost. Expected figures written out by hand from `min over components
 * of floor((ERP − safety 1) ÷ quantity)`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FlowDeps } from '../../../../../src/sync/flow.js';
import { type InventoryFlow, startInventoryFlow } from '../../../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../../src/sync/inventory/runtime.js';
import { waitFor } from '../../../../../src/wait-for.js';
import { PG_URL, pgScratch } from '../../../../erp/databases.js';
import { NEVER } from '../../../../helpers/erp-scenario.js';
import { createHarness, type Harness, pgStockSource } from '../../harness.js';

const CODES = ['MUG', 'BOX', 'CAN', 'LID', 'GIFT', 'SIXPACK', 'DUO', 'TRIO', 'PAIR'];

describe('a kits source polled by its changes query', () => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;
  let h: Harness;
  let deps: FlowDeps;
  let flow: InventoryFlow;
  let rt: InventoryRuntime;
  let s: string;

  const setStock = async (code: string, qty: number): Promise<void> => {
    await scratch.db.query(
      `INSERT INTO ${s}.stock (code, qty, modified) VALUES (:code, :qty, clock_timestamp() AT TIME ZONE 'UTC')
       ON CONFLICT (code) DO UPDATE SET qty = EXCLUDED.qty, modified = EXCLUDED.modified`,
      { code, qty },
    );
  };
  /** Stamps bundles as changed at `at` (a fixed instant: several bundles may share it). */
  const touch = async (at: string, ...kits: string[]): Promise<void> => {
    await scratch.db.query(`UPDATE ${s}.bundle SET modified = CAST(:at AS timestamp) WHERE kit = ANY(CAST(:kits AS text[]))`, { at, kits: `{${kits.join(',')}}` });
  };
  const idle = async (): Promise<void> => {
    const queue = flow.queues[0]!;
    await waitFor(async () => Object.values(await queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue drained', timeoutMs: 30_000 });
  };
  const shown = (code: string): unknown => h.sim.state.itemOn(code)?.item.Stock;

  beforeAll(async () => {
    scratch = await pgScratch();
    s = scratch.schema;
    await scratch.db.query(`CREATE TABLE ${s}.stock (code text PRIMARY KEY, qty int NOT NULL, modified timestamp(6) NOT NULL)`);
    await scratch.db.query(`CREATE TABLE ${s}.bundle (kit text PRIMARY KEY, disabled boolean NOT NULL DEFAULT false, modified timestamp(6) NOT NULL)`);
    await scratch.db.query(`CREATE TABLE ${s}.bundle_item (id serial PRIMARY KEY, kit text NOT NULL, component text NOT NULL, qty numeric NOT NULL)`);
    h = await createHarness(CODES.map((Code) => ({ Code, Stock: 0, Price: 1 })));
    deps = h.deps({
      inventory: {
        safetyStock: 1,
        sources: [pgStockSource(s)],
        kits: [
          {
            name: 'bundles',
            kind: 'sql',
            url: PG_URL,
            timeZone: 'UTC',
            // Never re-read whole during the test: only the change feed moves the figures.
            schedule: NEVER,
            changesSchedule: NEVER,
            // Three rows a read: the ties below are cut by it. No overlap: the cursor's own rows are re-read all the same.
            limit: 3,
            overlapMs: 0,
            snapshot: `SELECT b.kit, i.component, i.qty AS quantity FROM ${s}.bundle b JOIN ${s}.bundle_item i ON i.kit = b.kit WHERE NOT b.disabled`,
            changes: `SELECT b.kit, i.component, i.qty AS quantity, b.modified AS cursor
                FROM ${s}.bundle b LEFT JOIN ${s}.bundle_item i ON i.kit = b.kit AND NOT b.disabled
               WHERE CAST(:cursor AS timestamp) IS NULL OR b.modified >= :cursor
               ORDER BY b.modified, b.kit
               LIMIT :limit`,
          },
        ],
      },
    });
    flow = await startInventoryFlow(deps, { role: 'all' });
    rt = openInventoryRuntime(deps);
  });

  afterAll(async () => {
    await rt?.close();
    await flow?.close(1000);
    await h?.close();
    await scratch?.drop();
  });

  it('moves a kit\'s figure at the next poll of the change feed, before the snapshot is read again', async () => {
    // Safety 1: sellable MUG 8, BOX 3, CAN 17, LID 5.
    for (const [code, qty] of [['MUG', 9], ['BOX', 4], ['CAN', 18], ['LID', 6]] as const) await setStock(code, qty);
    await scratch.db.query(`INSERT INTO ${s}.bundle (kit, modified) VALUES ('GIFT', '2026-01-01 10:00:00'), ('SIXPACK', '2026-01-01 10:00:01')`);
    await scratch.db.query(`INSERT INTO ${s}.bundle_item (kit, component, qty) VALUES ('GIFT', 'MUG', 2), ('GIFT', 'BOX', 1), ('SIXPACK', 'CAN', 6)`);
    expect(await flow.kits('bundles')).toMatchObject({ kits: 2, changed: 2 });
    await flow.poll('erp');
    await idle();
    // GIFT min(floor(8/2), floor(3/1)) = 3; SIXPACK floor(17/6) = 2.
    expect([shown('GIFT'), shown('SIXPACK')]).toEqual([3, 2]);
    // The first poll reads the feed from the start: the same compositions, nothing changes. Its first read
    // (GIFT's 2 rows, SIXPACK's) is full: SIXPACK, at its last cursor, is held back and read again: 3 + 1 rows.
    expect(await flow.kitChanges('bundles')).toMatchObject({ read: 4, kits: 2, changed: 0, cursor: '2026-01-01T10:00:01.000Z' });
    expect(JSON.parse((await rt.redis.get(`${deps.config.redis.prefix}:state:kit:cursor:bundles`)) ?? 'null'), 'the cursor kept in Redis').toBe('2026-01-01T10:00:01.000Z');

    // GIFT becomes 4 MUG + 1 BOX + 1 LID: min(floor(8/4) = 2, 3, 5) = 2 (with the old 2 MUG: 3).
    await scratch.db.query(`UPDATE ${s}.bundle_item SET qty = 4 WHERE kit = 'GIFT' AND component = 'MUG'`);
    await scratch.db.query(`INSERT INTO ${s}.bundle_item (kit, component, qty) VALUES ('GIFT', 'LID', 1)`);
    await touch('2026-01-01 10:05:00', 'GIFT');
    const report = await flow.kitChanges('bundles');
    expect(report, 'GIFT read whole (SIXPACK at the cursor re-read, unchanged)').toMatchObject({ kits: 2, changed: 1, removed: 0, cursor: '2026-01-01T10:05:00.000Z' });
    await idle();
    expect(shown('GIFT'), 'GIFT = min(floor(8/4), 3, 5)').toBe(2);
    expect(await rt.kits?.explode('GIFT')).toEqual([{ code: 'BOX', quantity: 1 }, { code: 'LID', quantity: 1 }, { code: 'MUG', quantity: 4 }]);
    // The reverse index follows: LID's change now re-queues GIFT. LID 6 → 2: sellable 1, GIFT min(2, 3, 1) = 1.
    await setStock('LID', 2);
    await flow.poll('erp');
    await idle();
    expect(shown('GIFT'), 'GIFT limited by its new component LID').toBe(1);
  }, 60_000);

  it('removes a disabled bundle from the catalog at the next poll; the snapshot agrees', async () => {
    // SIXPACK disabled: the LEFT JOIN gives one row with neither component nor quantity.
    await scratch.db.query(`UPDATE ${s}.bundle SET disabled = true, modified = '2026-01-01 10:06:00' WHERE kit = 'SIXPACK'`);
    const writesBefore = h.sim.writes.length;
    const report = await flow.kitChanges('bundles');
    expect(report).toMatchObject({ removed: 1, changed: 1 });
    expect(await rt.kits?.explode('SIXPACK'), 'SIXPACK is no longer a kit').toBeUndefined();
    expect(await rt.kits?.kitsContaining('CAN'), 'CAN re-queues no kit').toEqual([]);
    expect(await rt.redis.smembers(`${deps.config.redis.prefix}:state:kit:src:bundles`).then((kits) => kits.sort())).toEqual(['GIFT']);
    await idle();
    // No longer a kit, SIXPACK is a plain code the ERP keeps no stock of: storesync writes nothing for it.
    expect(h.sim.writes.slice(writesBefore).filter((write) => write.code === 'SIXPACK')).toEqual([]);
    // A CAN change now re-queues no kit: CAN alone is written.
    await setStock('CAN', 30);
    await flow.poll('erp');
    await idle();
    expect(h.sim.writes.slice(writesBefore).map((write) => write.code)).toEqual(['CAN']);
    // The snapshot, read again, says the same: nothing changes.
    expect(await flow.kits('bundles')).toMatchObject({ kits: 1, changed: 0 });
  }, 60_000);

  it('loses no kit among rows sharing one cursor: cut by the limit, or committed after a poll read that cursor', async () => {
    // DUO (1 CAN + 1 MUG) and TRIO (1 BOX + 1 CAN + 1 MUG) share 10:07: with 3 rows a read, the first read
    // (SIXPACK's row at the stored cursor 10:06, then the tie) is cut inside DUO; the tie group is then read whole.
    await scratch.db.query(`INSERT INTO ${s}.bundle (kit, modified) VALUES ('DUO', '2026-01-01 10:07:00'), ('TRIO', '2026-01-01 10:07:00')`);
    await scratch.db.query(`INSERT INTO ${s}.bundle_item (kit, component, qty) VALUES ('DUO', 'CAN', 1), ('DUO', 'MUG', 1), ('TRIO', 'BOX', 1), ('TRIO', 'CAN', 1), ('TRIO', 'MUG', 1)`);
    const report = await flow.kitChanges('bundles');
    expect(report.cursor).toBe('2026-01-01T10:07:00.000Z');
    expect(await rt.kits?.explode('DUO'), 'DUO whole, though the first read cut it').toEqual([{ code: 'CAN', quantity: 1 }, { code: 'MUG', quantity: 1 }]);
    expect(await rt.kits?.explode('TRIO')).toEqual([{ code: 'BOX', quantity: 1 }, { code: 'CAN', quantity: 1 }, { code: 'MUG', quantity: 1 }]);
    await idle();
    // Sellable MUG 8, BOX 3, CAN 29: DUO min(29, 8) = 8; TRIO min(3, 29, 8) = 3.
    expect([shown('DUO'), shown('TRIO')]).toEqual([8, 3]);

    // PAIR committed after that poll with the same stamp, 10:07: the next poll starts at the cursor, inclusive.
    await scratch.db.query(`INSERT INTO ${s}.bundle (kit, modified) VALUES ('PAIR', '2026-01-01 10:07:00')`);
    await scratch.db.query(`INSERT INTO ${s}.bundle_item (kit, component, qty) VALUES ('PAIR', 'BOX', 2)`);
    const late = await flow.kitChanges('bundles');
    expect(late, 'PAIR is the only kit that changed').toMatchObject({ changed: 1, cursor: '2026-01-01T10:07:00.000Z' });
    await idle();
    // PAIR: floor(3 / 2) = 1.
    expect(shown('PAIR')).toBe(1);
  }, 60_000);

  it('refuses a bad change row with its reason and keeps the kit\'s last composition when every row of it is refused', async () => {
    await scratch.db.query(`UPDATE ${s}.bundle_item SET qty = 0 WHERE kit = 'PAIR'`);
    await touch('2026-01-01 10:08:00', 'PAIR');
    const report = await flow.kitChanges('bundles');
    expect(report).toMatchObject({ refused: 1, changed: 0 });
    const refused = await rt.kits!.refused('bundles');
    expect(refused.get('PAIR')?.map((issue) => [issue.field, issue.value, issue.rule])).toEqual([['quantity', 0, 'a number above 0']]);
    expect(await rt.kits?.explode('PAIR'), 'PAIR keeps 2 × BOX').toEqual([{ code: 'BOX', quantity: 2 }]);
    // Fixed in the ERP: the refusal goes, the composition follows (3 BOX: floor(3 / 3) = 1).
    await scratch.db.query(`UPDATE ${s}.bundle_item SET qty = 3 WHERE kit = 'PAIR'`);
    await touch('2026-01-01 10:09:00', 'PAIR');
    expect(await flow.kitChanges('bundles')).toMatchObject({ refused: 0, changed: 1 });
    expect((await rt.kits!.refused('bundles')).has('PAIR')).toBe(false);
    expect(await rt.kits?.explode('PAIR')).toEqual([{ code: 'BOX', quantity: 3 }]);
  }, 60_000);

  it('counts the refused rows of every batch of a poll, not the last batch\'s only', async () => {
    // From the stored cursor 10:09, three rows a read: PAIR (10:09, re-read), BAD1 (10:10), BAD2 (10:11).
    // That first batch is full: BAD2, at its last cursor, is held back and read again in a second batch.
    // One refused row in each batch: 2 in all (hand count), of 4 rows read.
    await scratch.db.query(`INSERT INTO ${s}.bundle (kit, modified) VALUES ('BAD1', '2026-01-01 10:10:00'), ('BAD2', '2026-01-01 10:11:00')`);
    await scratch.db.query(`INSERT INTO ${s}.bundle_item (kit, component, qty) VALUES ('BAD1', 'MUG', 0), ('BAD2', 'BOX', 0)`);
    expect(await flow.kitChanges('bundles')).toMatchObject({ read: 4, refused: 2, changed: 0, cursor: '2026-01-01T10:11:00.000Z' });
    expect([...(await rt.kits!.refused('bundles')).keys()].sort()).toEqual(['BAD1', 'BAD2']);
  }, 60_000);
});

describe('a kits source\'s changes query without changesSchedule', () => {
  it('is polled on the inventory source\'s schedule, the snapshot never read', async () => {
    const scratch = await pgScratch();
    const s = scratch.schema;
    const h = await createHarness([{ Code: 'CAN', Stock: 0, Price: 1 }, { Code: 'SIXPACK', Stock: 0, Price: 1 }]);
    let flow: InventoryFlow | undefined;
    try {
      await scratch.db.query(`CREATE TABLE ${s}.stock (code text PRIMARY KEY, qty int NOT NULL, modified timestamp(6) NOT NULL)`);
      await scratch.db.query(`CREATE TABLE ${s}.bundle (kit text, component text, qty numeric, modified timestamp(6) NOT NULL)`);
      await scratch.db.query(`INSERT INTO ${s}.bundle VALUES ('SIXPACK', 'CAN', 6, '2026-01-01 10:00:00')`);
      const deps = h.deps({
        inventory: {
          sources: [
            {
              name: 'erp',
              kind: 'sql',
              url: PG_URL,
              timeZone: 'UTC',
              // Every second: the kits source's changes are polled on it too.
              schedule: '* * * * * *',
              changes: `SELECT code AS "Code", qty AS "Stock", modified AS cursor FROM ${s}.stock
                WHERE CAST(:cursor AS timestamp) IS NULL OR modified > :cursor ORDER BY modified, code LIMIT :limit`,
            },
          ],
          kits: [
            {
              name: 'bundles',
              kind: 'sql',
              url: PG_URL,
              timeZone: 'UTC',
              schedule: NEVER,
              snapshot: `SELECT kit, component, qty AS quantity FROM ${s}.bundle`,
              changes: `SELECT kit, component, qty AS quantity, modified AS cursor FROM ${s}.bundle
                WHERE CAST(:cursor AS timestamp) IS NULL OR modified >= :cursor ORDER BY modified, kit LIMIT :limit`,
            },
          ],
        },
      });
      flow = await startInventoryFlow(deps, { role: 'all' });
      const polls: string[] = [];
      flow.events.on('inventory:kits:changes:done', (report) => polls.push(report.source));
      let snapshots = 0;
      flow.events.on('inventory:kits:done', () => (snapshots += 1));
      await waitFor(() => polls.length > 0, { message: 'a scheduled poll of the kits changes', timeoutMs: 30_000 });
      expect(polls[0]).toBe('bundles');
      expect(snapshots, 'the snapshot schedule never fired').toBe(0);
      const rt = openInventoryRuntime(deps);
      try {
        expect(await rt.kits?.explode('SIXPACK')).toEqual([{ code: 'CAN', quantity: 6 }]);
      } finally {
        await rt.close();
      }
    } finally {
      await flow?.close(1000);
      await h.close();
      await scratch.drop();
    }
  }, 60_000);
});

describe('a kits source\'s changes query with its own changesSchedule', () => {
  it('is polled on its changesSchedule, not on the inventory source\'s schedule', async () => {
    const scratch = await pgScratch();
    const s = scratch.schema;
    const h = await createHarness([{ Code: 'CAN', Stock: 0, Price: 1 }]);
    let flow: InventoryFlow | undefined;
    try {
      await scratch.db.query(`CREATE TABLE ${s}.stock (code text PRIMARY KEY, qty int NOT NULL, modified timestamp(6) NOT NULL)`);
      await scratch.db.query(`CREATE TABLE ${s}.bundle (kit text, component text, qty numeric, modified timestamp(6) NOT NULL)`);
      const deps = h.deps({
        inventory: {
          sources: [
            {
              name: 'erp',
              kind: 'sql',
              url: PG_URL,
              timeZone: 'UTC',
              // Every second: only the fallback of a kits source without changesSchedule.
              schedule: '* * * * * *',
              changes: `SELECT code AS "Code", qty AS "Stock", modified AS cursor FROM ${s}.stock
                WHERE CAST(:cursor AS timestamp) IS NULL OR modified > :cursor ORDER BY modified, code LIMIT :limit`,
            },
          ],
          kits: [
            {
              name: 'bundles',
              kind: 'sql',
              url: PG_URL,
              timeZone: 'UTC',
              schedule: NEVER,
              // Its own schedule (never, here) wins over the inventory source's.
              changesSchedule: NEVER,
              snapshot: `SELECT kit, component, qty AS quantity FROM ${s}.bundle`,
              changes: `SELECT kit, component, qty AS quantity, modified AS cursor FROM ${s}.bundle
                WHERE CAST(:cursor AS timestamp) IS NULL OR modified >= :cursor ORDER BY modified, kit LIMIT :limit`,
            },
          ],
        },
      });
      flow = await startInventoryFlow(deps, { role: 'all' });
      const kitPolls: string[] = [];
      flow.events.on('inventory:kits:changes:done', (report) => kitPolls.push(report.source));
      flow.events.on('inventory:kits:changes:failed', ({ source }) => kitPolls.push(source));
      let stockPolls = 0;
      flow.events.on('inventory:poll:done', (report) => void (report.source === 'erp' && (stockPolls += 1)));
      // Three polls of the inventory source: each tick of its schedule would have polled the kits changes too.
      await waitFor(() => stockPolls >= 3, { message: 'three scheduled polls of the inventory source', timeoutMs: 30_000 });
      expect(kitPolls, 'the kits changes are polled on their own changesSchedule only').toEqual([]);
    } finally {
      await flow?.close(1000);
      await h.close();
      await scratch.drop();
    }
  }, 60_000);
});
