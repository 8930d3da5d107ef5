import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type InventoryFlow, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { exceedsMassGuard, MASS_GUARD_MIN_COUNT } from '../../../../src/sync/inventory/snapshot/mass-guard.js';
import { waitFor } from '../../../../src/wait-for.js';
import { NEVER } from '../../../helpers/erp-scenario.js';
import { createHarness, type Harness } from '../harness.js';

describe('exceedsMassGuard', () => {
  it('holds more than the fraction when more than ten SKUs are affected', () => {
    expect(exceedsMassGuard(11, 100, 0.05)).toBe(true);
    expect(exceedsMassGuard(1000, 1000, 0.05)).toBe(true);
  });

  it('lets a fraction at or below the limit through', () => {
    expect(exceedsMassGuard(50, 1000, 0.05)).toBe(false);
    expect(exceedsMassGuard(51, 1000, 0.05)).toBe(true);
  });

  it('never holds ten SKUs or fewer, even all of a small catalogue', () => {
    expect(MASS_GUARD_MIN_COUNT).toBe(10);
    expect(exceedsMassGuard(10, 10, 0.05)).toBe(false);
    expect(exceedsMassGuard(0, 0, 0.05)).toBe(false);
  });

  it('takes another minimum count', () => {
    expect(exceedsMassGuard(3, 10, 0.05, 2)).toBe(true);
    expect(exceedsMassGuard(2, 10, 0.05, 2)).toBe(false);
  });

  it('holds a mass effect on an unknown total', () => {
    expect(exceedsMassGuard(11, 0, 0.05)).toBe(true);
  });
});

/**
 * The guard in the snapshot diff, on CSV exports of 100 SKUs each: `vanished.maxFraction` is the line,
 * its default 0.05 and a configured 0.2, each told from its near neighbours (15 of 100 held, 4 not; 21
 * of 100 held, 20 not). The flow tests elsewhere vanish 1 or 11–12 of 12, which any threshold up to ~0.9
 * lets through.
 */
describe('the snapshot diff honours vanished.maxFraction', () => {
  const codes = (prefix: string) => Array.from({ length: 100 }, (_, i) => `${prefix}-${String(i + 1).padStart(3, '0')}`);
  const DEFAULT = codes('MG-A');
  const WIDER = codes('MG-B');
  let h: Harness;
  let flow: InventoryFlow;
  let root: string;
  /** Each write of an export is a second newer than the last (its mtime is its rows' cursor). */
  let mtime = Date.parse('2025-01-01T00:00:00.000Z');

  async function writeExport(name: string, present: readonly string[]): Promise<void> {
    const file = join(root, `${name}.csv`);
    await writeFile(file, ['Code;Stock', ...present.map((code) => `${code};7`)].join('\n'));
    mtime += 1000;
    await utimes(file, new Date(mtime), new Date(mtime));
  }

  async function settled(): Promise<void> {
    const queue = flow.queues[0]!;
    await waitFor(async () => Object.values(await queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue to drain' });
  }

  /** Codes zeroed on the store since write `before`. */
  const zeroedSince = (before: number): string[] => h.sim.writes.slice(before).filter((w) => w.fields.Stock === 0).map((w) => w.code).sort();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'storesync-mass-guard-'));
    await mkdir(join(root, 'drop'));
    h = await createHarness([...DEFAULT, ...WIDER].map((Code) => ({ Code, Stock: 1, Price: 10 })));
    const source = (name: string, extra: Record<string, unknown>) => ({ name, kind: 'csv', dir: join(root, 'drop'), snapshotFile: join(root, `${name}.csv`), settleMs: 0, diff: { schedule: NEVER }, ...extra });
    flow = await startInventoryFlow(h.deps({ inventory: { sources: [source('default', {}), source('wider', { vanished: { maxFraction: 0.2 } })] } }), { role: 'all' });
    await writeExport('default', DEFAULT);
    await writeExport('wider', WIDER);
    expect(await flow.diff('default')).toMatchObject({ read: 100, vanished: 0, held: 0 });
    expect(await flow.diff('wider')).toMatchObject({ read: 100, vanished: 0, held: 0 });
    await settled();
  });

  afterAll(async () => {
    await flow?.close();
    await h?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('holds 15 of 100 vanishing at once under the default 0.05, and vanishes 4 of 100', async () => {
    let before = h.sim.writes.length;
    await writeExport('default', DEFAULT.slice(15));
    const held = await flow.diff('default');
    expect(held, '15 of 100 (15% > 5%) must be held, none zeroed').toMatchObject({ previous: 100, held: 15, vanished: 0 });
    await settled();
    expect(zeroedSince(before)).toEqual([]);

    before = h.sim.writes.length;
    await writeExport('default', DEFAULT.slice(4));
    const report = await flow.diff('default');
    expect(report, '4 of 100 vanish (the held 15 came back)').toMatchObject({ previous: 100, held: 0, vanished: 4 });
    await settled();
    expect(zeroedSince(before)).toEqual(DEFAULT.slice(0, 4));
  });

  it('holds 21 of 100 under maxFraction 0.2, and vanishes 20 of 100 (at the line is not over it)', async () => {
    let before = h.sim.writes.length;
    await writeExport('wider', WIDER.slice(21));
    expect(await flow.diff('wider'), '21 of 100 (21% > 20%) must be held').toMatchObject({ previous: 100, held: 21, vanished: 0 });
    await settled();
    expect(zeroedSince(before)).toEqual([]);

    before = h.sim.writes.length;
    await writeExport('wider', WIDER.slice(20));
    expect(await flow.diff('wider'), '20 of 100 (20%, not more) vanish').toMatchObject({ previous: 100, held: 0, vanished: 20 });
    await settled();
    expect(zeroedSince(before)).toEqual(WIDER.slice(0, 20));
  });
});
