import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type InventoryFlow, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { waitFor } from '../../../../src/wait-for.js';
import { mariaScratch } from '../../../erp/databases.js';
import { cli } from '../../../helpers/cli.js';
import { createHarness, type Harness } from '../harness.js';

const CODES = ['M-1', 'M-2', 'M-3'];

let h: Harness;
let rt: InventoryRuntime;
let flow: InventoryFlow;
let maria: Awaited<ReturnType<typeof mariaScratch>>;
let sourceConfig: Record<string, unknown>;

async function settled(): Promise<void> {
  await waitFor(async () => Object.values(await rt.queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue to drain' });
}

const stock = (code: string): unknown => h.sim.state.items.get(code)?.item.Stock;

beforeEach(async () => {
  maria = await mariaScratch();
  // A legacy table without a change column, and ERPNext's kind of deletion log.
  await maria.db.query('CREATE TABLE items (code VARCHAR(20) PRIMARY KEY, stock INT)');
  await maria.db.query('CREATE TABLE deleted_items (code VARCHAR(20), deleted_at DATETIME(3))');
  await maria.db.query("INSERT INTO items VALUES ('M-1', 5), ('M-2', 6), ('M-3', 7)");
  h = await createHarness(CODES.map((Code) => ({ Code, Stock: 1, Price: 10 })));
  sourceConfig = {
    name: 'legacy',
    kind: 'sql',
    url: maria.url,
    snapshot: 'SELECT code, stock FROM items',
    deletions: "SELECT code, deleted_at AS `cursor` FROM deleted_items WHERE deleted_at >= COALESCE(:cursor, '1970-01-01') ORDER BY deleted_at, code LIMIT :limit",
    diff: { schedule: '0 0 0 1 1 *' },
    vanished: { action: 'unpublish' },
  };
  const deps = h.deps({ inventory: { sources: [sourceConfig] } });
  rt = openInventoryRuntime(deps);
  flow = await startInventoryFlow(deps, { role: 'all' });
});

afterEach(async () => {
  await flow.close();
  await rt.close();
  await h.close();
  await maria.drop();
});

describe('snapshot diff of a MariaDB table without a change column', () => {
  it('follows changes, and vanishes a SKU its deletions query names before the diff compares', async () => {
    expect(await flow.diff('legacy')).toMatchObject({ read: 3, queued: 3, deleted: 0 });
    await settled();
    expect(CODES.map(stock)).toEqual([5, 6, 7]);

    await maria.db.query("UPDATE items SET stock = 50 WHERE code = 'M-1'");
    await maria.db.query("DELETE FROM items WHERE code = 'M-2'");
    await maria.db.query("INSERT INTO deleted_items VALUES ('M-2', NOW(3))");
    // The deletion vanished M-2 first (its fingerprint with it): the diff counts it once, as deleted.
    expect(await flow.diff('legacy')).toMatchObject({ changed: 1, queued: 1, deleted: 1, vanished: 0, held: 0 });
    await settled();
    expect(CODES.map(stock)).toEqual([50, 0, 7]);
    expect(h.sim.state.items.get('M-2')?.item.Published).toBe(false);
    // Read again by the next diff (its overlap): applied already, nothing more.
    expect(await flow.diff('legacy')).toMatchObject({ changed: 0, queued: 0, deleted: 0 });
  });

  it('is shown by `sources test` from its snapshot, having no changes query', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'storesync-diff-maria-'));
    try {
      const configFile = join(dir, 'config.yaml');
      await writeFile(configFile, JSON.stringify({ redis: { prefix: h.prefix }, log: { level: 'silent' }, inventory: { sources: [sourceConfig] } }));
      const run = await cli(['sources', 'test', 'legacy', '--limit', '2', '--json', '--config', configFile]);
      expect(run.code).toBe(0);
      const [result] = (JSON.parse(run.stdout) as { sources: Array<{ records: Array<Record<string, unknown>>; error?: unknown }> }).sources;
      expect(result?.error).toBeUndefined();
      expect(result?.records).toHaveLength(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
