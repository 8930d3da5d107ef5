/**
 * The reconcile's staged paths across pages of 1,000 (STAGE_CHUNK): the absent SKUs looked up a page at a
 * time, the creation items and the orphans' staged for the queue, the differing targets counted in Redis,
 * a dry run's targets as a staged set, the store codes with no ERP record for the store-rejects clearing.
 * The ERP is an in-memory source; every expected figure is written out from how the test builds both sides.
 */
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import type { ChangeSource, SnapshotChunk } from '../../../../src/erp/types.js';
import { QUEUE_NAMES } from '../../../../src/queue/connection.js';
import type { ItemInput } from '../../../../src/simulator/index.js';
import { reconcileWith } from '../../../../src/sync/inventory/reconcile/reconcile.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { jobSkus } from '../../../../src/sync/inventory/types.js';
import { listKeys } from '../../../support/redis.js';
import { createHarness, type Harness } from '../harness.js';

let h: Harness | undefined;
let rt: InventoryRuntime | undefined;

afterEach(async () => {
  await rt?.close();
  await h?.close();
  rt = undefined;
  h = undefined;
});

/** `P-0001` … */
const code = (i: number): string => `P-${String(i).padStart(4, '0')}`;
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k);

/** An ERP of `count` rows, P-0001 … with Stock 5 and Price 10, in chunks of 700 (not a multiple of a page). */
function erpOf(count: number): ChangeSource {
  return {
    name: 'erp',
    kind: 'sql',
    readChanges: () => Promise.reject(new Error('not polled')),
    close: () => Promise.resolve(),
    async *snapshot() {
      for (let start = 1; start <= count; start += 700) {
        const chunk: SnapshotChunk = range(start, Math.min(start + 699, count)).map((i) => ({ ref: `row ${i}`, cursor: null, fields: { Code: code(i), Stock: 5, Price: 10 } }));
        yield chunk;
      }
    },
  };
}

/** The targets the inventory queue holds jobs of. */
async function queuedTargets(harness: Harness, runtime: InventoryRuntime): Promise<string[]> {
  const queue = new Queue(QUEUE_NAMES.inventory, { connection: runtime.redis, prefix: harness.prefix });
  try {
    const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
    return jobs.flatMap((job) => jobSkus(job.data)).sort();
  } finally {
    await queue.close();
  }
}

/** The store items parked in `store-rejects`. */
async function storeRejects(harness: Harness, runtime: InventoryRuntime): Promise<Array<{ id?: string }>> {
  const queue = new Queue(QUEUE_NAMES.storeRejects, { connection: runtime.redis, prefix: harness.prefix });
  try {
    return await queue.getFailed();
  } finally {
    await queue.close();
  }
}

describe('reconcile across pages of 1,000 (staged in Redis)', () => {
  it('looks up 2,500 absent SKUs a page at a time, finding those on another site in the second and last pages, and creates the rest', async () => {
    // Site 1 (store.siteId) holds P-0001 … P-2000 (two pages), three of them drifted; site 3 holds P-3100 (the
    // 1,100th absent SKU: second page) and P-4500 (the 2,500th: last page); P-2001 … P-4500 are absent from site 1.
    const items: ItemInput[] = range(1, 2000).map((i) => ({ Code: code(i), Stock: i === 5 || i === 2000 ? 6 : 5, Price: i === 1500 || i === 2000 ? 11 : 10, SiteId: 1 }));
    items.push({ Code: code(3100), Stock: 5, Price: 10, SiteId: 3 }, { Code: code(4500), Stock: 5, Price: 10, SiteId: 3 });
    h = await createHarness(items);
    rt = openInventoryRuntime(h.deps({ store: { siteId: 1 }, inventory: { createMissing: true } }));
    const dry = await reconcileWith(rt, [erpOf(4500)], { dryRun: true });
    // 2,500 absent, 2 of them on site 3: 2,498 missing; P-0005 (Stock), P-1500 (Price), P-2000 (both): 4 fields, 3 targets.
    const expected = {
      erpRecords: 4500,
      storeItems: 2000,
      differences: 4,
      perField: { Stock: 2, Price: 2 },
      itemsWithDifferences: 3,
      skusWithDifferences: 3,
      missingOnStore: 2498,
      missingSample: range(2001, 2020).map(code),
      onOtherSites: 2,
      otherSiteSample: [
        { sku: 'P-3100', siteIds: [3] },
        { sku: 'P-4500', siteIds: [3] },
      ],
      onlyOnStore: 0,
    };
    expect(dry).toMatchObject({ ...expected, queued: 3 + 2498 });
    expect(await queuedTargets(h, rt)).toEqual([]);
    const report = await reconcileWith(rt, [erpOf(4500)]);
    expect(report).toMatchObject({ ...expected, queued: 3 + 2498 });
    const created = range(2001, 4500).filter((i) => i !== 3100 && i !== 4500);
    expect(await queuedTargets(h, rt)).toEqual([...[5, 1500, 2000], ...created].map(code).sort());
    expect(await listKeys(rt.redis, `${h.prefix}:state:inv:recon`)).toEqual([]);
  }, 120_000);

  it('goes through exactly 2,000 absent SKUs (two full pages), the last one found on another site', async () => {
    const items: ItemInput[] = range(1, 2000).map((i) => ({ Code: code(i), Stock: 5, Price: 10, SiteId: 1 }));
    items.push({ Code: code(4000), Stock: 5, Price: 10, SiteId: 3 });
    h = await createHarness(items);
    rt = openInventoryRuntime(h.deps({ store: { siteId: 1 }, inventory: { createMissing: true } }));
    const report = await reconcileWith(rt, [erpOf(4000)]);
    expect(report).toMatchObject({ erpRecords: 4000, storeItems: 2000, differences: 0, itemsWithDifferences: 0, missingOnStore: 1999, onOtherSites: 1, otherSiteSample: [{ sku: 'P-4000', siteIds: [3] }], queued: 1999 });
    expect(await queuedTargets(h, rt)).toEqual(range(2001, 3999).map(code));
  }, 120_000);

  it('counts an absent SKU missing on each site of inventory.sites once, over 1,400 absent SKUs (two pages)', async () => {
    // inventory.sites [1, 2]: each ERP SKU has a target on both sites. The store holds P-0001 … P-1200 on
    // site 1 only: each is missing on site 2 (1,200); P-1201 … P-2600 are on no site: missing on both (2 × 1,400).
    h = await createHarness(range(1, 1200).map((i) => ({ Code: code(i), Stock: 5, Price: 10, SiteId: 1 })));
    rt = openInventoryRuntime(h.deps({ inventory: { sites: [{ siteId: 1 }, { siteId: 2 }] } }));
    const report = await reconcileWith(rt, [erpOf(2600)], { dryRun: true });
    expect(report).toMatchObject({ erpRecords: 2600, storeItems: 1200, missingOnStore: 1200 + 2 * 1400, onOtherSites: 0 });
  }, 120_000);

  it('creates the SKUs missing on a site of inventory.sites when none is absent from every site, over 1,200 SKUs (two pages)', async () => {
    // inventory.sites [1, 2]: each ERP SKU has a target on both sites. The store holds P-0001 … P-1200 on site 1
    // only: none is absent from every site read (no absent pass), each is missing on site 2: 1,200 creations there.
    h = await createHarness(range(1, 1200).map((i) => ({ Code: code(i), Stock: 5, Price: 10, SiteId: 1 })));
    rt = openInventoryRuntime(h.deps({ inventory: { sites: [{ siteId: 1 }, { siteId: 2 }], createMissing: true } }));
    const report = await reconcileWith(rt, [erpOf(1200)]);
    expect(report).toMatchObject({ erpRecords: 1200, storeItems: 1200, differences: 0, missingOnStore: 1200, onOtherSites: 0, queued: 1200 });
    // A site target's key: the Code, U+001F, the site.
    expect(await queuedTargets(h, rt)).toEqual(range(1, 1200).map((i) => `${code(i)}\u001f2`));
  }, 120_000);

  it('counts a target found different on two sites read once, and its SKU once, over pages of both reads', async () => {
    // Every item on sites 1 and 2 (1,500 each: two pages a read); the ERP rows name no site and no
    // inventory.sites is set, so each SKU has one target, its bare Code, compared on both reads.
    h = await createHarness(range(1, 1500).map((i) => ({ Code: code(i), Stock: 5, Price: 10 })), { itemsPerSite: [1, 2] });
    h.sim.upsertItem({ Code: code(7), Stock: 9, SiteId: 1 });
    h.sim.upsertItem({ Code: code(7), Stock: 9, SiteId: 2 });
    h.sim.upsertItem({ Code: code(1200), Price: 12, SiteId: 2 });
    rt = openInventoryRuntime(h.deps({ inventory: { reconcile: { siteIds: [1, 2] } } }));
    const dry = await reconcileWith(rt, [erpOf(1500)], { dryRun: true });
    // P-0007's Stock on each site and P-1200's Price on site 2: 3 differences, 2 targets, 2 SKUs, 2 targets to queue.
    expect(dry).toMatchObject({ storeItems: 3000, differences: 3, perField: { Stock: 2, Price: 1 }, itemsWithDifferences: 2, skusWithDifferences: 2, missingOnStore: 0, queued: 2 });
    const report = await reconcileWith(rt, [erpOf(1500)]);
    expect(report).toMatchObject({ differences: 3, itemsWithDifferences: 2, skusWithDifferences: 2 });
    expect(await queuedTargets(h, rt)).toEqual(['P-0007', 'P-1200']);
  }, 120_000);

  it('stages 1,500 orphans over two store pages: counted once each, the first 20 sampled, every one zeroed once confirmed', async () => {
    // The ERP has P-0001 … P-0500; the store has them and O-0001 … O-1500 (Stock 3), read without a site filter.
    const orphan = (i: number): string => `O-${String(i).padStart(4, '0')}`;
    h = await createHarness([...range(1, 500).map((i) => ({ Code: code(i), Stock: 5, Price: 10 })), ...range(1, 1500).map((i) => ({ Code: orphan(i), Stock: 3, Price: 10 }))]);
    rt = openInventoryRuntime(h.deps({ inventory: { reconcile: { orphans: 'zero' } } }));
    // O-1400, in the second page, is parked once malformed, and cleared by the next run that reads it whole.
    h.sim.faults.set({ malformedItemCodes: [orphan(1400)] });
    expect(await reconcileWith(rt, [erpOf(500)])).toMatchObject({ storeRejected: 1, onlyOnStore: 1499 });
    expect((await storeRejects(h, rt)).map((job) => job.id)).toEqual([expect.stringContaining(orphan(1400))]);
    h.sim.faults.set({ malformedItemCodes: [] });
    const held = await reconcileWith(rt, [erpOf(500)]);
    expect(await storeRejects(h, rt)).toEqual([]);
    expect(held).toMatchObject({ storeItems: 2000, onlyOnStore: 1500, onlyOnStoreSample: range(1, 20).map(orphan), orphans: { checked: true, toChange: 1500, held: 1500, queued: 0 }, queued: 0 });
    const dry = await reconcileWith(rt, [erpOf(500)], { dryRun: true, confirmOrphans: true });
    expect(dry).toMatchObject({ onlyOnStore: 1500, orphans: { toChange: 1500, held: 0, queued: 1500 }, queued: 1500 });
    const report = await reconcileWith(rt, [erpOf(500)], { confirmOrphans: true });
    expect(report).toMatchObject({ onlyOnStore: 1500, orphans: { toChange: 1500, held: 0, queued: 1500 }, queued: 1500 });
    expect(await queuedTargets(h, rt)).toEqual(range(1, 1500).map(orphan));
  }, 120_000);
});
