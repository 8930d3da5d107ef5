import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type InventoryFlow, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { DiffState } from '../../../../src/sync/inventory/snapshot/diff-state.js';
import { waitFor } from '../../../../src/wait-for.js';
import { createHarness, type Harness, writesOf } from '../harness.js';

const NEVER = '0 0 0 1 1 *';
const CODES = ['C-1', 'C-2', 'C-3', 'C-4'];

let h: Harness;
let rt: InventoryRuntime;
let flow: InventoryFlow;
let root: string;
let snapshotFile: string;
/** Each write of the export is a second newer than the last (its mtime is its rows' cursor). */
let mtime = Date.parse('2025-01-01T00:00:00.000Z');

async function writeExport(rows: string[]): Promise<void> {
  await writeFile(snapshotFile, ['Code;Stock;Price', ...rows].join('\n'));
  mtime += 1000;
  await utimes(snapshotFile, new Date(mtime), new Date(mtime));
}

async function settled(): Promise<void> {
  await waitFor(async () => Object.values(await rt.queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue to drain' });
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'storesync-diff-csv-'));
  await mkdir(join(root, 'drop'));
  snapshotFile = join(root, 'all-items.csv');
  h = await createHarness(CODES.map((Code) => ({ Code, Stock: 1, Price: 10 })));
  const deps = h.deps({
    inventory: {
      // No schedule: the drop folder is never polled; the export is diffed.
      sources: [{ name: 'export', kind: 'csv', dir: join(root, 'drop'), snapshotFile, settleMs: 0, diff: { schedule: NEVER }, vanished: { action: 'unpublish', maxFraction: 0.5 } }],
    },
  });
  rt = openInventoryRuntime(deps);
  flow = await startInventoryFlow(deps, { role: 'all' });
});

afterEach(async () => {
  await flow.close();
  await rt.close();
  await h.close();
  await rm(root, { recursive: true, force: true });
});

describe('snapshot diff of a CSV export', () => {
  it('queues the changed rows, unpublishes the missing one, and keeps a SKU whose row is refused', async () => {
    await writeExport(['C-1;5;10', 'C-2;6;10', 'C-3;7;10', 'C-4;8;10']);
    expect(await flow.diff('export')).toMatchObject({ read: 4, changed: 4, queued: 4 });
    await settled();
    expect(writesOf(h.sim, 'C-1').map((w) => w.fields)).toEqual([{ Stock: 5, Price: 10 }]);
    const before = h.sim.writes.length;

    // C-2's price changed, C-3's row is broken (kept as it was), C-4 is gone.
    await writeExport(['C-1;5;10', 'C-2;6;12.5', 'C-3;lots;10']);
    const report = await flow.diff('export');
    expect(report).toMatchObject({ read: 3, previous: 4, changed: 1, queued: 1, vanished: 1, held: 0, refused: 1 });
    await settled();
    expect(h.sim.writes.slice(before).map((w) => [w.code, w.fields]).sort()).toEqual([
      ['C-2', { Price: 12.5 }],
      ['C-4', { Stock: 0, Published: false }],
    ]);
    expect(h.sim.state.items.get('C-3')?.item.Stock).toBe(7);
  });

  it('compares nothing and changes no fingerprint when the export is not valid CSV', async () => {
    await writeExport(['C-1;5;10', 'C-2;6;10', 'C-3;7;10', 'C-4;8;10']);
    await flow.diff('export');
    await settled();
    const diffState = new DiffState(rt.redis, h.prefix);
    const prints = await diffState.fingerprints('export');
    expect(prints.size).toBe(4);

    await writeExport(['C-1;9;10', '"C-2;6;10']);
    await expect(flow.diff('export')).rejects.toThrow(/not valid CSV/);
    expect(await diffState.fingerprints('export')).toEqual(prints);
    expect(await rt.queue.count()).toBe(0);
    expect(h.sim.state.items.get('C-1')?.item.Stock).toBe(5);
  });
});
