import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { INVENTORY_FIELDS } from '../../../../src/erp/fields.js';
import { createSource } from '../../../../src/erp/index.js';
import { createLogger } from '../../../../src/log.js';
import { ActivityLog } from '../../../../src/ops/activity-log.js';
import { explainSku } from '../../../../src/sync/inventory/explain.js';
import { type InventoryFlow, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { DiffState } from '../../../../src/sync/inventory/snapshot/diff-state.js';
import { diffSource } from '../../../../src/sync/inventory/snapshot/snapshot-diff.js';
import { confirmHeld } from '../../../../src/sync/inventory/snapshot/vanished.js';
import { waitFor } from '../../../../src/wait-for.js';
import { cli } from '../../../helpers/cli.js';
import { logCollector } from '../../../ops/helpers.js';
import { createHarness, type Harness, inventoryAdmin, writesOf } from '../harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `diff_${randomUUID().replace(/-/g, '')}`;
const db = new pg.Client({ connectionString: PG_URL });
const NEVER = '0 0 0 1 1 *';

/** Twelve SKUs: the guard needs more than ten to hold anything. */
const CODES = Array.from({ length: 12 }, (_, i) => `D-${String(i + 1).padStart(2, '0')}`);
const STORE = CODES.map((Code, i) => ({ Code, Stock: 0, Price: 100 + i }));

let h: Harness;
let rt: InventoryRuntime;
let flow: InventoryFlow | undefined;
let logs: string;
let flowDeps: ReturnType<typeof deps>;
let table: string;

function source(overrides: Record<string, unknown> = {}) {
  return {
    name: 'erp',
    kind: 'sql',
    url: PG_URL,
    schedule: NEVER,
    changes: `SELECT code AS "Code", stock AS "Stock", changed_at AS cursor FROM ${table}
      WHERE changed_at >= COALESCE(CAST(:cursor AS timestamp), '-infinity') ORDER BY cursor, "Code" LIMIT :limit`,
    snapshot: `SELECT code AS "Code", stock AS "Stock" FROM ${table}`,
    diff: { schedule: NEVER },
    limit: 5,
    ...overrides,
  };
}

function deps(src: Record<string, unknown> = source()) {
  const d = h.deps({ inventory: { sources: [src] } });
  return { ...d, logger: createLogger({ level: 'info', destination: { write: (line: string) => (logs += line) } }) };
}

async function start(src?: Record<string, unknown>): Promise<InventoryFlow> {
  flowDeps = deps(src);
  flow = await startInventoryFlow(flowDeps, { role: 'all' });
  return flow;
}

/** Waits until no inventory job waits or runs. */
async function settled(): Promise<void> {
  await waitFor(async () => {
    const counts = await rt.queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed');
    return Object.values(counts).every((n) => n === 0);
  }, { message: 'the inventory queue to drain' });
}

async function setStock(code: string, stock: number, { moveCursor }: { moveCursor: boolean }): Promise<void> {
  await db.query(`UPDATE ${table} SET stock = $2${moveCursor ? ', changed_at = clock_timestamp()' : ''} WHERE code = $1`, [code, stock]);
}

/** The store's current item of `code`. */
function storeItem(code: string) {
  return h.sim.state.items.get(code)?.item;
}

beforeAll(async () => {
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
});

afterAll(async () => {
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
});

beforeEach(async () => {
  table = `${schema}.t_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  await db.query(`CREATE TABLE ${table} (code text PRIMARY KEY, stock int, changed_at timestamp(3) NOT NULL DEFAULT '2024-01-01')`);
  for (const [i, code] of CODES.entries()) await db.query(`INSERT INTO ${table} (code, stock) VALUES ($1, $2)`, [code, 10 + i]);
  logs = '';
  h = await createHarness(STORE);
  rt = openInventoryRuntime(h.deps());
});

afterEach(async () => {
  await flow?.close();
  flow = undefined;
  await rt.close();
  await h.close();
});

describe('snapshot diff', () => {
  it('queues every SKU on its first diff, and the worker skips values the store already acknowledged', async () => {
    // The changes poll starts after the rows' cursor: only D-01, changed later, is polled and acknowledged at 10.
    const f = await start(source({ initialCursor: '2024-03-01T00:00:00.000Z' }));
    await db.query(`UPDATE ${table} SET changed_at = '2024-06-01' WHERE code = 'D-01'`);
    expect((await f.poll('erp')).queued).toBe(1);
    await settled();
    const before = h.sim.writes.length;
    expect(writesOf(h.sim, 'D-01').map((w) => w.fields)).toEqual([{ Stock: 10 }]);

    const report = await f.diff('erp');
    expect(report).toMatchObject({ source: 'erp', read: 12, previous: 0, changed: 12, queued: 12, vanished: 0, held: 0, refused: 0 });
    await settled();
    // D-01 was acknowledged at the same value: no second write; the eleven others are written.
    expect(writesOf(h.sim, 'D-01')).toHaveLength(1);
    expect(h.sim.writes.slice(before).map((w) => w.code).sort()).toEqual(CODES.slice(1));

    const again = await f.diff('erp');
    expect(again).toMatchObject({ previous: 12, changed: 0, queued: 0 });
  });

  it('catches a row changed without its cursor moving, which the changes poll misses', async () => {
    const f = await start(source({ initialCursor: '2024-03-01T00:00:00.000Z' }));
    await f.diff('erp');
    await settled();
    // The changes cursor moves past the other rows' timestamps.
    await setStock('D-12', 30, { moveCursor: true });
    expect((await f.poll('erp')).queued).toBe(1);
    await settled();
    const before = h.sim.writes.length;
    await setStock('D-03', 99, { moveCursor: false });
    expect((await f.poll('erp')).queued).toBe(0);

    const report = await f.diff('erp');
    // D-12's new value is new to the diff too, but the store acknowledged it already.
    expect(report).toMatchObject({ changed: 2, queued: 2 });
    await settled();
    expect(storeItem('D-03')?.Stock).toBe(99);
    expect(h.sim.writes.slice(before).map((w) => [w.code, w.fields])).toEqual([['D-03', { Stock: 99 }]]);
  });

  it('never lets a snapshot value override a newer change still pending', async () => {
    const f = await start();
    await f.diff('erp');
    await settled();
    // A change with a cursor is merged but not yet sent; the diff then reads an older value of the same row.
    await rt.state.merge([{ sku: 'D-04', entries: { Stock: { value: 5, version: Date.now() + 60_000, at: Date.now(), source: 'erp' } } }]);
    await setStock('D-04', 77, { moveCursor: false });
    await f.diff('erp');
    await settled();
    expect(storeItem('D-04')?.Stock).toBe(5);
  });

  it('zeroes a deleted row and brings it back when it returns', async () => {
    const f = await start();
    await f.diff('erp');
    await settled();
    await db.query(`DELETE FROM ${table} WHERE code = 'D-05'`);

    const report = await f.diff('erp');
    expect(report).toMatchObject({ vanished: 1, held: 0, changed: 0 });
    await settled();
    expect(storeItem('D-05')?.Stock).toBe(0);
    const explained = await explainSku(deps(), 'D-05');
    expect(explained.vanished).toEqual([expect.objectContaining({ source: 'erp', reason: 'absent', action: 'zero' })]);
    expect(explained.vanished[0]?.at).toMatch(/^\d{4}-/);

    await db.query(`INSERT INTO ${table} (code, stock) VALUES ('D-05', 15)`);
    expect(await f.diff('erp')).toMatchObject({ changed: 1, queued: 1, vanished: 0 });
    await settled();
    expect(storeItem('D-05')?.Stock).toBe(15);
    expect((await explainSku(deps(), 'D-05')).vanished).toEqual([]);
  });

  it('unpublishes a deleted row with action unpublish, and publishes it again when it returns', async () => {
    const f = await start(source({ vanished: { action: 'unpublish' } }));
    await f.diff('erp');
    await settled();
    await db.query(`DELETE FROM ${table} WHERE code = 'D-06'`);
    expect(await f.diff('erp')).toMatchObject({ vanished: 1 });
    await settled();
    expect(storeItem('D-06')).toMatchObject({ Stock: 0, Published: false });

    await db.query(`INSERT INTO ${table} (code, stock) VALUES ('D-06', 4)`);
    await f.diff('erp');
    await settled();
    expect(storeItem('D-06')).toMatchObject({ Stock: 4, Published: true });
  });

  it('holds an empty snapshot: none vanished, an error line, the gauge; --confirm applies it', async () => {
    const f = await start();
    await f.diff('erp');
    await settled();
    const before = h.sim.writes.length;
    await db.query(`DELETE FROM ${table}`);
    await db.query(`INSERT INTO ${table} (code, stock) VALUES ('D-01', 50)`);

    const report = await f.diff('erp');
    // The change of D-01 still flows; the eleven others are held.
    expect(report).toMatchObject({ changed: 1, queued: 1, vanished: 0, held: 11 });
    await settled();
    expect(h.sim.writes.slice(before).map((w) => w.code)).toEqual(['D-01']);
    expect(logs).toMatch(/"level":"error".*snapshot diff of erp: 11 of 12 SKUs vanished at once/);
    expect((await flowDeps.metrics.vanishedHeld.get()).values).toEqual([expect.objectContaining({ labels: { source: 'erp' }, value: 11 })]);
    const diffState = new DiffState(rt.redis, h.prefix);
    expect(await diffState.heldPage('erp', 100)).toEqual(CODES.slice(1));
    // Still held at the next diff; nothing was written for them.
    expect(await f.diff('erp')).toMatchObject({ held: 11, vanished: 0 });

    const confirmed = await confirmHeld(rt, 'erp', 'zero');
    expect(confirmed).toMatchObject({ source: 'erp', confirmed: 11 });
    await settled();
    for (const code of CODES.slice(1)) expect(storeItem(code)?.Stock).toBe(0);
    expect(await diffState.heldCount('erp')).toBe(0);
    // Confirmed by another runtime (the CLI's): the flow's gauge follows Redis at the next scrape.
    expect(await flowDeps.metrics.render()).toContain('storesync_vanished_held{source="erp"} 0');
    expect((await explainSku(deps(), 'D-02')).vanished).toEqual([expect.objectContaining({ reason: 'absent', confirmed: true })]);
    expect(await f.diff('erp')).toMatchObject({ held: 0, vanished: 0, previous: 1 });
  });

  it('writes nothing for held SKUs that come back before anyone confirms', async () => {
    const f = await start();
    await f.diff('erp');
    await settled();
    const before = h.sim.writes.length;
    const rows = (await db.query(`SELECT code, stock FROM ${table}`)).rows as Array<{ code: string; stock: number }>;
    await db.query(`DELETE FROM ${table}`);
    expect(await f.diff('erp')).toMatchObject({ held: 12 });
    for (const row of rows) await db.query(`INSERT INTO ${table} (code, stock) VALUES ($1, $2)`, [row.code, row.stock]);
    expect(await f.diff('erp')).toMatchObject({ held: 0, vanished: 0, changed: 0, queued: 0 });
    await settled();
    expect(h.sim.writes.length).toBe(before);
    expect(await new DiffState(rt.redis, h.prefix).heldCount('erp')).toBe(0);
  });

  it('changes no fingerprint and queues nothing when the snapshot fails part way', async () => {
    const f = await start();
    await f.diff('erp');
    await settled();
    const diffState = new DiffState(rt.redis, h.prefix);
    const prints = await diffState.fingerprints('erp');
    await f.close();
    await setStock('D-02', 123, { moveCursor: false });
    // Division by zero on the ninth row, read in the second chunk of five.
    const broken = source({ snapshot: `SELECT code AS "Code", stock / (CASE WHEN code = 'D-09' THEN 0 ELSE 1 END) AS "Stock" FROM ${table} ORDER BY code` });
    const g = await start(broken);
    await expect(g.diff('erp')).rejects.toThrow(/division by zero/);
    expect(await diffState.fingerprints('erp')).toEqual(prints);
    expect(await rt.queue.count()).toBe(0);
    expect((await rt.state.read('D-02')).pending.size).toBe(0);
  });

  it('changes nothing when a shutdown cuts the read short', async () => {
    const f = await start();
    await f.diff('erp');
    await settled();
    const diffState = new DiffState(rt.redis, h.prefix);
    const prints = await diffState.fingerprints('erp');
    await db.query(`DELETE FROM ${table} WHERE code > 'D-06'`);
    await setStock('D-01', 1, { moveCursor: false });
    const config = flowDeps.config.inventory.sources[0]!;
    const erp = createSource(config, { fields: INVENTORY_FIELDS, logger: rt.logger });
    const stop = new AbortController();
    // The shutdown comes once the first chunk of five rows is read.
    const cut = { ...erp, snapshot: async function* () {
      for await (const chunk of erp.snapshot!()) {
        yield chunk;
        stop.abort(new Error('shutting down'));
      }
    } };
    try {
      await expect(diffSource(rt, cut, { vanished: { action: 'zero', maxFraction: 1 }, otherSources: [], signal: stop.signal })).rejects.toThrow('shutting down');
    } finally {
      await erp.close();
    }
    expect(await diffState.fingerprints('erp')).toEqual(prints);
    expect(await rt.queue.count()).toBe(0);
    expect((await rt.state.read('D-01')).pending.size).toBe(0);
  });

  it('runs a source with a snapshot and a diff but no changes query and no schedule, on its diff schedule', async () => {
    const { changes: _changes, schedule: _schedule, ...rest } = source({ diff: { schedule: '* * * * * *' } });
    const f = await start(rest);
    const activity = new ActivityLog({ logger: flowDeps.logger, summaryIntervalMs: 3_600_000 });
    activity.watchInventory(f.events);
    const report = await f.events.next('inventory:diff:done');
    activity.close();
    expect(report).toMatchObject({ source: 'erp', read: 12, queued: 12 });
    await settled();
    expect(storeItem('D-12')?.Stock).toBe(21);
    await expect(f.poll('erp')).rejects.toThrow(/not polled|no changes query/);
    expect(logs).toMatch(/"level":"info".*snapshot diff of erp: 12 rows read, 12 changed, 12 SKUs queued, 0 vanished, 0 held/);
  });

  it('vanishes the SKUs the deletions query names, until a newer change names them again', async () => {
    await db.query(`CREATE TABLE ${table}_deleted (code text, deleted_at timestamp(3))`);
    const deletions = `SELECT code AS "Code", deleted_at AS cursor FROM ${table}_deleted
      WHERE deleted_at >= COALESCE(CAST(:cursor AS timestamp), '-infinity') ORDER BY cursor, "Code" LIMIT :limit`;
    const f = await start(source({ deletions }));
    await f.poll('erp');
    await settled();
    expect(storeItem('D-07')?.Stock).toBe(16);
    // Deleted in the ERP now; the snapshot query still lists it (an archived row).
    await db.query(`INSERT INTO ${table}_deleted VALUES ('D-07', clock_timestamp())`);
    await f.poll('erp');
    await settled();
    expect(storeItem('D-07')?.Stock).toBe(0);
    expect((await explainSku(deps(), 'D-07')).vanished).toEqual([expect.objectContaining({ reason: 'deleted' })]);
    // The diff's cursor-less row is not newer than the deletion: the SKU stays zero.
    const diffed = await f.diff('erp');
    expect(diffed.queued).toBe(11);
    await settled();
    expect(storeItem('D-07')?.Stock).toBe(0);
    // A change newer than the deletion brings it back.
    await setStock('D-07', 8, { moveCursor: true });
    await f.poll('erp');
    await settled();
    expect(storeItem('D-07')?.Stock).toBe(8);
    // From then on the diff follows it again, cursor or not.
    await setStock('D-07', 3, { moveCursor: false });
    expect(await f.diff('erp')).toMatchObject({ queued: 1 });
    await settled();
    expect(storeItem('D-07')?.Stock).toBe(3);
    expect((await explainSku(deps(), 'D-07')).vanished).toEqual([]);
  });

  it('brings back a deleted SKU when its snapshot row carries a cursor newer than the deletion, polled or not', async () => {
    await db.query(`CREATE TABLE ${table}_deleted (code text, deleted_at timestamp(3))`);
    const deletions = `SELECT code AS "Code", deleted_at AS cursor FROM ${table}_deleted
      WHERE deleted_at >= COALESCE(CAST(:cursor AS timestamp), '-infinity') ORDER BY cursor, "Code" LIMIT :limit`;
    // The snapshot gives each row its cursor: a row changed after its deletion ends it, though no poll read it.
    const f = await start(source({ deletions, snapshot: `SELECT code AS "Code", stock AS "Stock", changed_at AS cursor FROM ${table}` }));
    await f.poll('erp');
    await settled();
    await f.diff('erp');
    await settled();
    await db.query(`INSERT INTO ${table}_deleted VALUES ('D-07', '2025-01-01')`);
    await f.poll('erp');
    await settled();
    expect(storeItem('D-07')?.Stock).toBe(0);
    // Changed on 2025-06-01, after its deletion (2025-01-01); its newest polled stock is still of 2024-01-01.
    await db.query(`UPDATE ${table} SET stock = 5, changed_at = '2025-06-01' WHERE code = 'D-07'`);
    expect(await f.diff('erp')).toMatchObject({ changed: 1, queued: 1 });
    await settled();
    expect(storeItem('D-07')?.Stock).toBe(5);
    expect((await explainSku(deps(), 'D-07')).vanished).toEqual([]);
  });

  it('lists held SKUs with `inventory vanished` and confirms them through the audited admin route', async () => {
    const token = 'diff-test-token-0123456789';
    const dir = await mkdtemp(join(tmpdir(), 'storesync-diff-'));
    const configFile = join(dir, 'config.yaml');
    // JSON is YAML: the queries keep their line breaks.
    const config = { store: { baseUrl: h.sim.url, username: 'demo', password: 'demo-password' }, redis: { prefix: h.prefix }, log: { level: 'silent' }, inventory: { sources: [source()] } };
    await writeFile(configFile, JSON.stringify(config));
    try {
      const first = await cli(['inventory', 'diff', '--source', 'erp', '--json', '--config', configFile]);
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({ source: 'erp', read: 12, queued: 12 });
      await start();
      await settled();
      await db.query(`DELETE FROM ${table} WHERE code <> 'D-01'`);
      expect((await cli(['inventory', 'diff', '--source', 'erp', '--json', '--config', configFile])).stdout).toContain('"held": 11');

      const listed = await cli(['inventory', 'vanished', '--source', 'erp', '--config', configFile]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('the mass guard holds 11 vanished SKU(s)');
      expect(listed.stdout).toContain('D-02');
      const unknown = await cli(['inventory', 'vanished', '--source', 'nope', '--config', configFile]);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('no source named "nope"');

      const d = h.deps({ admin: { token }, inventory: { sources: [source()] } });
      const logs = logCollector('info');
      const app = await inventoryAdmin(d, logs.logger);
      try {
        const url = '/admin/inventory/vanished/confirm';
        const headers = { authorization: `Bearer ${token}` };
        expect((await app.inject({ method: 'POST', url, payload: { source: 'erp' } })).statusCode).toBe(401);
        expect((await app.inject({ method: 'POST', url, headers, payload: { sources: 'erp' } })).json()).toMatchObject({ issues: [{ field: 'sources' }, { field: 'source' }] });
        expect((await app.inject({ method: 'POST', url, headers, payload: { source: 'nope' } })).statusCode).toBe(404);
        const done = await app.inject({ method: 'POST', url, headers, payload: { source: 'erp' } });
        expect(done.statusCode).toBe(200);
        expect(done.json()).toMatchObject({ source: 'erp', confirmed: 11 });
        expect(logs.lines()).toContainEqual(expect.objectContaining({ audit: true, action: 'inventory:vanished:confirm', user: 'token', source: 'erp', skus: 11 }));
      } finally {
        await app.close();
      }
      await settled();
      for (const code of CODES.slice(1)) expect(storeItem(code)?.Stock).toBe(0);
      expect((await cli(['inventory', 'vanished', '--source', 'erp', '--config', configFile])).stdout).toContain('holds nothing');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
