/**
 * End-to-end scenarios on a legacy stock table with no change column (test/erp/legacy-erp.ts): the
 * source has a snapshot and a diff, no changes query and no schedule of its own. Each ends with the
 * store equal to the table, or held by the guard where that is the point. Real Redis, real PostgreSQL,
 * the simulator over HTTP.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { pgScratch } from '../../erp/databases.js';
import { exampleSqlSource, pgUrlIn } from '../../erp/example-sources.js';
import { LegacyErp } from '../../erp/legacy-erp.js';
import { NEVER, type Scenario, startScenario, storeMismatches } from '../../helpers/erp-scenario.js';
import { createHarness, type Harness } from './harness.js';

const CODES = Array.from({ length: 15 }, (_, i) => `LG-${String(i + 1).padStart(3, '0')}`);

let scratch: Awaited<ReturnType<typeof pgScratch>>;
let legacy: LegacyErp;
let h: Harness;
let scenario: Scenario;

async function start(): Promise<void> {
  // The source of config/examples/no-change-column.yaml on the scratch schema, diffed by hand.
  const source = { ...exampleSqlSource('no-change-column.yaml'), url: pgUrlIn(legacy.schema), diff: { schedule: NEVER } };
  scenario = await startScenario(h, { inventory: { sources: [source] } });
}

async function mismatches(): Promise<string[]> {
  return storeMismatches(h.sim, await legacy.truth(), [...CODES, 'LG-NEW']);
}

beforeEach(async () => {
  scratch = await pgScratch();
  legacy = await LegacyErp.create(scratch.db, scratch.schema);
  for (const [i, code] of CODES.entries()) await legacy.set(code, 5 + i, 9.5 + i);
  h = await createHarness([...CODES, 'LG-NEW'].map((Code) => ({ Code, Stock: 0, Price: 1 })));
});

afterEach(async () => {
  await scenario?.close();
  await h.close();
  await scratch.drop();
});

describe('a table without a change column (snapshot + diff, no changes)', () => {
  it('publishes the table on the first diff, then only what changed, zeroing a dropped article', async () => {
    await start();
    expect(await scenario.diff('legacy')).toMatchObject({ previous: 0, changed: CODES.length });
    expect(await mismatches()).toEqual([]);

    await legacy.set('LG-002', 0, 10.5);
    await legacy.set('LG-003', 8, 99);
    await legacy.set('LG-NEW', 4, 3);
    await legacy.drop('LG-004');
    const writes = h.sim.writes.length;
    expect(await scenario.diff('legacy')).toMatchObject({ changed: 3, vanished: 1, held: 0 });
    expect(await mismatches()).toEqual([]);
    expect(new Set(h.sim.writes.slice(writes).map((w) => w.code))).toEqual(new Set(['LG-002', 'LG-003', 'LG-NEW', 'LG-004']));
  });

  it('holds every article when a reload empties the table, and writes nothing once it is back', async () => {
    await start();
    await scenario.diff('legacy');
    const restore = await legacy.emptyForReload();
    const before = await legacy.truth();
    expect(before.size).toBe(0);
    expect(await scenario.diff('legacy')).toMatchObject({ read: 0, vanished: 0, held: CODES.length });
    await restore();
    // Held, not written: the store still shows the table as it was (and is again).
    expect(await mismatches()).toEqual([]);
    const writes = h.sim.writes.length;
    expect(await scenario.diff('legacy')).toMatchObject({ changed: 0, vanished: 0, held: 0 });
    expect(h.sim.writes.length).toBe(writes);
  });
});
