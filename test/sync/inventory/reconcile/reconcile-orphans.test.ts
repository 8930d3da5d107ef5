import { randomUUID } from 'node:crypto';

import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { createLogger } from '../../../../src/log.js';
import { QUEUE_NAMES } from '../../../../src/queue/connection.js';
import { runReconcile } from '../../../../src/sync/inventory/reconcile/reconcile.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { createInventoryWorker } from '../../../../src/sync/inventory/worker.js';
import { waitFor } from '../../../../src/wait-for.js';
import { createHarness, type Harness } from '../harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `orph_${randomUUID().replace(/-/g, '')}`;
const db = new pg.Client({ connectionString: PG_URL });

/** 20 SKUs in the ERP (O-01..O-20), on the store too, plus store-only items. */
const ERP_CODES = Array.from({ length: 20 }, (_, i) => `O-${String(i + 1).padStart(2, '0')}`);
const STORE = [
  ...ERP_CODES.map((Code) => ({ Code, Stock: 5, Price: 10, Published: true })),
  { Code: 'GONE-1', Stock: 7, Price: 10, Published: true },
  { Code: 'GONE-2', Stock: 3, Price: 10, Published: true },
  { Code: 'GONE-0', Stock: 0, Price: 10, Published: true },
  // The ERP has it, with a stock the store refuses: refused, not an orphan.
  { Code: 'BAD-1', Stock: 4, Price: 10, Published: true },
];

let h: Harness;
let rt: InventoryRuntime;
let logLines: string[];

function deps(orphans: 'report' | 'zero' | 'unpublish' = 'report', table = 'items') {
  const d = h.deps({
    inventory: {
      reconcile: { orphans },
      sources: [
        {
          name: 'erp',
          kind: 'sql',
          url: PG_URL,
          schedule: '0 0 0 1 1 *',
          changes: `SELECT code AS "Code", stock AS "Stock", 0 AS cursor FROM ${schema}.${table} WHERE :cursor IS NOT NULL LIMIT :limit`,
          snapshot: `SELECT code AS "Code", stock AS "Stock" FROM ${schema}.${table}`,
        },
      ],
    },
  });
  return { ...d, logger: createLogger({ level: 'warn', destination: { write: (line: string) => void logLines.push(line) } }) };
}

const storeItem = (code: string) => h.sim.state.items.get(code)?.item;

beforeAll(async () => {
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`CREATE TABLE ${schema}.items (code text PRIMARY KEY, stock int)`);
  await db.query(`CREATE TABLE ${schema}.broken (code text PRIMARY KEY, stock int)`);
  // Stock as text, as a legacy export keeps it: one value no source can read.
  await db.query(`CREATE TABLE ${schema}.texts (code text PRIMARY KEY, stock text)`);
  for (const code of ERP_CODES) await db.query(`INSERT INTO ${schema}.texts VALUES ($1, '5')`, [code]);
  await db.query(`INSERT INTO ${schema}.texts VALUES ('GONE-1', 'lots')`);
  for (const code of ERP_CODES) await db.query(`INSERT INTO ${schema}.items VALUES ($1, 5)`, [code]);
  await db.query(`INSERT INTO ${schema}.items VALUES ('BAD-1', -2)`);
});

afterAll(async () => {
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
});

beforeEach(async () => {
  logLines = [];
  h = await createHarness(STORE);
  rt = openInventoryRuntime(h.deps());
});

afterEach(async () => {
  await rt.close();
  await h.close();
});

/** The store items parked in `store-rejects`. */
async function storeRejects(): Promise<Array<{ id?: string }>> {
  const queue = new Queue(QUEUE_NAMES.storeRejects, { connection: rt.redis, prefix: h.prefix });
  try {
    return await queue.getFailed();
  } finally {
    await queue.close();
  }
}

/** Runs a worker until the store has taken every queued job. */
async function drain(): Promise<void> {
  const worker = createInventoryWorker(rt, rt.connect());
  try {
    await waitFor(async () => {
      const counts = await rt.queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed');
      return Object.values(counts).every((n) => n === 0);
    }, { message: 'inventory queue drained' });
  } finally {
    await worker.close();
  }
}

describe('reconcile orphans (store items no ERP source has)', () => {
  it('counts and lists them by default and writes nothing for them', async () => {
    const d = deps();
    const report = await runReconcile(d);
    expect(report).toMatchObject({ onlyOnStore: 3, orphans: { checked: true, action: 'report', toChange: 0, queued: 0, held: 0 }, queued: 0 });
    expect([...report.onlyOnStoreSample].sort()).toEqual(['GONE-0', 'GONE-1', 'GONE-2']);
    expect((await d.metrics.reconcileOrphans.get()).values).toContainEqual(expect.objectContaining({ labels: { state: 'found' }, value: 3 }));
  });

  it('tells nothing on a run limited to a source or to SKUs, which cannot see every ERP SKU', async () => {
    expect((await runReconcile(deps('zero'), { source: 'erp', dryRun: true })).orphans).toMatchObject({ checked: false, queued: 0 });
    expect((await runReconcile(deps('zero'), { skus: ['GONE-1'], dryRun: true })).orphans).toMatchObject({ checked: false, queued: 0 });
  });

  it('zeroes the orphans whose store stock is not 0, once: the next reconcile has nothing to do', async () => {
    const report = await runReconcile(deps('zero'));
    expect(report).toMatchObject({ onlyOnStore: 3, orphans: { action: 'zero', toChange: 2, queued: 2, held: 0 } });
    await drain();
    expect(storeItem('GONE-1')).toMatchObject({ Stock: 0, Published: true });
    expect(storeItem('GONE-2')).toMatchObject({ Stock: 0, Published: true });
    expect(h.sim.writes.filter((w) => w.code === 'GONE-0')).toEqual([]);
    expect(storeItem('BAD-1')?.Stock).toBe(4);

    const again = await runReconcile(deps('zero'));
    expect(again).toMatchObject({ onlyOnStore: 3, orphans: { toChange: 0, queued: 0 }, queued: 0 });
  });

  it('unpublishes the orphans; a SKU that comes back in the ERP gets its stock again (Published stays as the ERP maps it)', async () => {
    await runReconcile(deps('unpublish'));
    await drain();
    for (const code of ['GONE-0', 'GONE-1', 'GONE-2']) expect(storeItem(code)).toMatchObject({ Stock: 0, Published: false });

    await db.query(`INSERT INTO ${schema}.items VALUES ('GONE-1', 9)`);
    try {
      const report = await runReconcile(deps('unpublish'));
      expect(report.onlyOnStoreSample).not.toContain('GONE-1');
      await drain();
      expect(storeItem('GONE-1')?.Stock).toBe(9);
    } finally {
      await db.query(`DELETE FROM ${schema}.items WHERE code = 'GONE-1'`);
    }
  });

  it('holds them all when an ERP query returns nothing, with an error line and the held metric, and acts once confirmed', async () => {
    const d = deps('zero', 'broken');
    const report = await runReconcile(d);
    expect(report).toMatchObject({ erpRecords: 0, onlyOnStore: 24, orphans: { toChange: 23, queued: 0, held: 23 }, queued: 0 });
    expect(await rt.queue.count()).toBe(0);
    expect((await d.metrics.reconcileOrphans.get()).values).toContainEqual(expect.objectContaining({ labels: { state: 'held' }, value: 23 }));
    const line = logLines.map((l) => JSON.parse(l) as { level: string; msg: string }).find((l) => l.level === 'error');
    expect(line?.msg).toContain('23 of 24 store items have no ERP record and would be zeroed');
    expect(line?.msg).toContain('--confirm-orphans');

    const confirmed = await runReconcile(deps('zero', 'broken'), { confirmOrphans: true });
    expect(confirmed).toMatchObject({ orphans: { toChange: 23, queued: 23, held: 0 } });
    await drain();
    expect([...h.sim.state.items.values()].every(({ item }) => item.Stock === 0)).toBe(true);
  });

  it('takes no SKU whose snapshot row the source could not read for an orphan', async () => {
    const report = await runReconcile(deps('zero', 'texts'), { dryRun: true });
    expect(report.rejected).toBeGreaterThanOrEqual(1);
    expect([...report.onlyOnStoreSample].sort()).toEqual(['BAD-1', 'GONE-0', 'GONE-2']);
    expect(report.orphans).toMatchObject({ toChange: 2, queued: 2 });
  });

  it("clears the store-reject of an item whose ERP record is refused (no orphan) once the store sends it whole", async () => {
    // BAD-1's ERP stock (-2) is refused: its store item is no orphan, but the store showed its code. Parked once
    // the store sends it malformed; the next run, reading it whole, clears it.
    h.sim.faults.set({ malformedItemCodes: ['BAD-1'] });
    expect(await runReconcile(deps())).toMatchObject({ storeRejected: 1, onlyOnStore: 3 });
    expect((await storeRejects()).map((job) => job.id)).toEqual([expect.stringContaining('BAD-1')]);
    h.sim.faults.set({ malformedItemCodes: [] });
    expect(await runReconcile(deps())).toMatchObject({ storeRejected: 0, onlyOnStore: 3 });
    expect(await storeRejects()).toEqual([]);
  });

  it('acts below the guard: two orphans of 24 store items are not a mass effect', async () => {
    const report = await runReconcile(deps('zero'), { dryRun: true });
    expect(report).toMatchObject({ dryRun: true, orphans: { toChange: 2, queued: 2, held: 0 }, queued: 2 });
    expect(await rt.queue.count()).toBe(0);
  });
});
