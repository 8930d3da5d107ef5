/**
 * Reviewing what the mass guard holds (issue 28, point 5): the full list in Code order, paged, as text,
 * JSON and from the admin endpoint; `--keep` writing nothing; `--confirm` from the CLI counted by the
 * daemon; the readable explanation of a vanished SKU; held SKUs left in the layout of the release before.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { stateKey } from '../../../../src/queue/connection.js';
import type { FlowDeps } from '../../../../src/sync/flow.js';
import { heldPage, type InventoryFlow, keepVanished, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { waitFor } from '../../../../src/wait-for.js';
import { cli } from '../../../helpers/cli.js';
import { logCollector } from '../../../ops/helpers.js';
import { createHarness, type Harness, inventoryAdmin } from '../harness.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const NEVER = '0 0 0 1 1 *';
const TOKEN = 'review-test-token-0123456789';
const schema = `review_${randomUUID().replace(/-/g, '')}`;
const db = new pg.Client({ connectionString: PG_URL });

/** A world of its own: a table of `codes` (stock = its number), the simulator holding them, a running flow, a config file for the CLI. */
interface World {
  h: Harness;
  rt: InventoryRuntime;
  flow: InventoryFlow;
  deps: FlowDeps;
  table: string;
  configFile: string;
  dir: string;
}

/** A table without a change column: read by its diff only. */
function source(table: string) {
  return { name: 'erp', kind: 'sql', url: PG_URL, snapshot: `SELECT code AS "Code", stock AS "Stock" FROM ${table}`, diff: { schedule: NEVER } };
}

async function world(codes: readonly string[]): Promise<World> {
  const table = `${schema}.t_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  await db.query(`CREATE TABLE ${table} (code text PRIMARY KEY, stock int, changed_at timestamp(3) NOT NULL DEFAULT '2024-01-01')`);
  await db.query(`INSERT INTO ${table} (code, stock) SELECT unnest($1::text[]), unnest($2::int[])`, [codes, codes.map((_, i) => i + 1)]);
  const h = await createHarness(codes.map((Code) => ({ Code, Stock: 0, Price: 10 })));
  const deps = h.deps({ inventory: { sources: [source(table)] } });
  const dir = await mkdtemp(join(tmpdir(), 'storesync-review-'));
  const configFile = join(dir, 'config.yaml');
  // JSON is YAML: the queries keep their line breaks.
  const config = { store: { baseUrl: h.sim.url, username: 'demo', password: 'demo-password' }, redis: { prefix: h.prefix }, log: { level: 'silent' }, inventory: { sources: [source(table)] } };
  await writeFile(configFile, JSON.stringify(config));
  const rt = openInventoryRuntime(h.deps());
  const flow = await startInventoryFlow(deps, { role: 'all' });
  return { h, rt, flow, deps, table, configFile, dir };
}

async function closeWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  await w.flow.close();
  await w.rt.close();
  await w.h.close();
  await rm(w.dir, { recursive: true, force: true });
}

/** Waits until no inventory job waits or runs. */
const settled = (w: World) =>
  waitFor(async () => Object.values(await w.rt.queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue to drain', timeoutMs: 60_000 });

/** First diff (every SKU written once), then all rows but `remaining` deleted and diffed again: the guard holds the rest. */
async function holdAllBut(w: World, remaining: readonly string[]): Promise<void> {
  await w.flow.diff('erp');
  await settled(w);
  await db.query(`DELETE FROM ${w.table} WHERE NOT (code = ANY($1::text[]))`, [remaining]);
}

const cliIn = (w: World, args: string[]) => cli([...args, '--config', w.configFile]);

beforeAll(() => db.connect().then(() => db.query(`CREATE SCHEMA ${schema}`)));
afterAll(() => db.query(`DROP SCHEMA ${schema} CASCADE`).then(() => db.end()));

describe('the held SKUs of a mass guard, 525 of them', () => {
  // R-1 … R-530: their Code order (R-1, R-10, R-100, …) is not their number's, nor the table's.
  const codes = Array.from({ length: 530 }, (_, i) => `R-${i + 1}`);
  const remaining = codes.slice(0, 5);
  // The oracle: every code gone, sorted as strings (ASCII, so JavaScript's order is Redis's byte order).
  const held = codes.filter((code) => !remaining.includes(code)).sort();
  let w: World;

  beforeAll(async () => {
    w = await world(codes);
    await holdAllBut(w, remaining);
    expect(await w.flow.diff('erp')).toMatchObject({ held: 525, vanished: 0 });
  });
  afterAll(() => closeWorld(w));

  it('lists every held SKU in Code order as text, and as one JSON document', async () => {
    const text = await cliIn(w, ['inventory', 'vanished', '--source', 'erp']);
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Source erp: the mass guard holds 525 vanished SKU\(s\) since \d{4}-\d\d-\d\dT[\d:.]+Z; nothing was written for them\.$/);
    expect(lines.slice(1, -1)).toEqual(held);
    expect(lines.at(-1)).toBe('--confirm applies "zero" to them; --keep records them as vanished and writes nothing to the store.');

    const json = await cliIn(w, ['inventory', 'vanished', '--source', 'erp', '--json']);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as { skus: string[] };
    expect(doc).toMatchObject({ source: 'erp', action: 'zero', held: 525, next: null });
    expect(doc.skus).toEqual(held);
  });

  it('pages with --limit and --after: each page the next Codes, the last one with next null', async () => {
    const pages: string[][] = [];
    let after: string | null = null;
    do {
      const run = await cliIn(w, ['inventory', 'vanished', '--source', 'erp', '--json', '--limit', '200', ...(after === null ? [] : ['--after', after])]);
      const page = JSON.parse(run.stdout) as { skus: string[]; next: string | null; held: number };
      expect(page.held).toBe(525);
      pages.push(page.skus);
      after = page.next;
      if (after !== null) expect(after).toBe(page.skus.at(-1));
    } while (after !== null && pages.length < 10);
    expect(pages.map((page) => page.length)).toEqual([200, 200, 125]);
    expect(pages.flat()).toEqual(held);

    const text = await cliIn(w, ['inventory', 'vanished', '--source', 'erp', '--limit', '3']);
    expect(text.stdout.split('\n').slice(1, 5)).toEqual([...held.slice(0, 3), `More: --after ${held[2]}`]);
    const bad = await cliIn(w, ['inventory', 'vanished', '--source', 'erp', '--limit', '0']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('--limit');
  });

  it('serves the same list from GET /admin/inventory/vanished, paged by query string', async () => {
    const app = await inventoryAdmin({ ...w.deps, config: { ...w.deps.config, admin: { token: TOKEN, username: '', password: '' } } }, logCollector('info').logger);
    try {
      const url = '/admin/inventory/vanished';
      const headers = { authorization: `Bearer ${TOKEN}` };
      expect((await app.inject({ method: 'GET', url: `${url}?source=erp` })).statusCode).toBe(401);
      const all = await app.inject({ method: 'GET', url: `${url}?source=erp`, headers });
      expect(all.statusCode).toBe(200);
      expect(all.json()).toMatchObject({ source: 'erp', action: 'zero', held: 525, skus: held, next: null });

      const pages: string[][] = [];
      for (let after: string | null = '', i = 0; after !== null && i < 10; i++) {
        const page = (await app.inject({ method: 'GET', url: `${url}?source=erp&limit=250${after === '' ? '' : `&after=${encodeURIComponent(after)}`}`, headers })).json() as { skus: string[]; next: string | null };
        pages.push(page.skus);
        after = page.next;
      }
      expect(pages.map((page) => page.length)).toEqual([250, 250, 25]);
      expect(pages.flat()).toEqual(held);

      expect((await app.inject({ method: 'GET', url: `${url}?source=nope`, headers })).statusCode).toBe(404);
      const bad = await app.inject({ method: 'GET', url: `${url}?source=erp&limit=0&sourc=erp`, headers });
      expect(bad.statusCode).toBe(400);
      expect((bad.json() as { issues: Array<{ field: string }> }).issues.map(({ field }) => field)).toEqual(['sourc', 'limit']);
    } finally {
      await app.close();
    }
  });

  it('refuses to confirm or keep for a source that is not configured: 404 naming it, every SKU still held', async () => {
    const app = await inventoryAdmin({ ...w.deps, config: { ...w.deps.config, admin: { token: TOKEN, username: '', password: '' } } }, logCollector('info').logger);
    try {
      const headers = { authorization: `Bearer ${TOKEN}` };
      for (const path of ['keep', 'confirm']) {
        const refused = await app.inject({ method: 'POST', url: `/admin/inventory/vanished/${path}`, headers, payload: { source: 'nope' } });
        expect(refused.statusCode, `POST ${path} for an unknown source`).toBe(404);
        expect((refused.json() as { error: string }).error).toContain('no source named "nope" (configured: erp)');
      }
      expect((await app.inject({ method: 'GET', url: '/admin/inventory/vanished?source=erp&limit=1', headers })).json()).toMatchObject({ held: 525 });
    } finally {
      await app.close();
    }
  });

  it('keeps them with --keep: nothing written to the store, the hold cleared, explain says kept; one back in the ERP syncs normally', async () => {
    const before = w.h.sim.writes.length;
    const kept = await cliIn(w, ['inventory', 'vanished', '--source', 'erp', '--keep', '--json']);
    expect(kept.code).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({ source: 'erp', action: 'keep', confirmed: 525 });
    await settled(w);
    expect(w.h.sim.writes.slice(before)).toEqual([]);
    // The store keeps what the ERP last gave: R-300 had stock 300.
    expect(w.h.sim.state.items.get('R-300')?.item.Stock).toBe(300);
    expect((await cliIn(w, ['inventory', 'vanished', '--source', 'erp'])).stdout).toBe('Source erp: the mass guard holds nothing\n');

    const explained = await cliIn(w, ['inventory', 'explain', 'R-300']);
    expect(explained.stdout).toMatch(/R-300: kept by an operator at \d{4}-[\d-]+T[\d:.]+Z \(absent from its snapshot, held by the mass guard of source erp\): nothing written/);
    // Kept, not held: the next diff neither holds nor vanishes them again.
    expect(await w.flow.diff('erp')).toMatchObject({ held: 0, vanished: 0, queued: 0 });
    await settled(w);
    expect(w.h.sim.writes.length).toBe(before);

    await db.query(`INSERT INTO ${w.table} (code, stock) VALUES ('R-300', 7)`);
    expect(await w.flow.diff('erp')).toMatchObject({ queued: 1 });
    await settled(w);
    expect(w.h.sim.writes.slice(before).map(({ code }) => code)).toEqual(['R-300']);
    expect(w.h.sim.state.items.get('R-300')?.item.Stock).toBe(7);
    expect((await cliIn(w, ['inventory', 'explain', 'R-300', '--json'])).stdout).toContain('"vanished": []');
  });
});

describe('a CLI --confirm', () => {
  const codes = Array.from({ length: 12 }, (_, i) => `D-${String(i + 1).padStart(2, '0')}`);
  let w: World;

  beforeAll(async () => {
    w = await world(codes);
    await holdAllBut(w, ['D-01']);
    expect(await w.flow.diff('erp')).toMatchObject({ held: 11 });
  });
  afterAll(() => closeWorld(w));

  it("is counted in the daemon's storesync_vanished_total, and explain says in words why the SKU is 0", async () => {
    const counted = async () => (await w.deps.metrics.vanished.get()).values.filter(({ labels }) => labels.source === 'erp' && labels.reason === 'absent').reduce((sum, { value }) => sum + value, 0);
    expect(await counted()).toBe(0);
    const confirmed = await cliIn(w, ['inventory', 'vanished', '--source', 'erp', '--confirm']);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toMatch(/^Source erp: zero applied to 11 held SKU\(s\): D-02, D-03/);
    await settled(w);
    expect(w.h.sim.state.items.get('D-05')?.item.Stock).toBe(0);
    // The daemon's registry (not the CLI's) takes the count at its next scrape, and once only.
    expect(await w.deps.metrics.render()).toContain('storesync_vanished_total{source="erp",reason="absent"} 11');
    expect(await w.deps.metrics.render()).toContain('storesync_vanished_total{source="erp",reason="absent"} 11');

    const explained = await cliIn(w, ['inventory', 'explain', 'D-05']);
    expect(explained.stdout).toMatch(/\nVanished:\n {2}D-05: Stock 0 because it vanished from source erp at [\dT:.Z-]+ \(absent from its snapshot; vanished.action zero, confirmed by an operator\)\n/);
  });
});

describe('held SKUs left by the release before (a hash of target key → {"at": ms})', () => {
  let h: Harness;
  let deps: FlowDeps;

  beforeAll(async () => {
    h = await createHarness([]);
    deps = h.deps({ inventory: { sources: [source(`${schema}.unused`)] } });
  });
  afterAll(() => h.close());

  it('are listed in Code order with the oldest time, paged per Code, and kept', async () => {
    const redis = deps.connect();
    const key = stateKey(h.prefix, 'inv', 'held', 'erp');
    // The exact layout before: one hash field per target key (a site's after \u001f), a JSON entry each.
    await redis.hset(key, 'C-3', '{"at":1700000005000}', 'A-1\u001f2', '{"at":1700000001000}', 'B-2', '{"at":1700000003000}', 'A-1', '{"at":1700000002000}');

    expect(await heldPage(deps, 'erp', {})).toEqual({ source: 'erp', action: 'zero', held: 4, since: new Date(1700000001000).toISOString(), skus: ['A-1', 'A-1 (site 2)', 'B-2', 'C-3'], next: null });
    expect(await redis.type(key)).toBe('zset');
    // A page of one Code holds all its targets; the next starts after them.
    expect(await heldPage(deps, 'erp', { limit: 1 })).toMatchObject({ skus: ['A-1', 'A-1 (site 2)'], next: 'A-1' });
    expect(await heldPage(deps, 'erp', { limit: 1, after: 'A-1' })).toMatchObject({ skus: ['B-2'], next: 'B-2' });
    expect(await heldPage(deps, 'erp', { limit: 1, after: 'B-2' })).toMatchObject({ skus: ['C-3'], next: null });

    expect(await keepVanished(deps, 'erp')).toMatchObject({ action: 'keep', confirmed: 4 });
    expect(await heldPage(deps, 'erp', {})).toMatchObject({ held: 0, since: null, skus: [] });
    expect(h.sim.writes).toEqual([]);
  });
});
