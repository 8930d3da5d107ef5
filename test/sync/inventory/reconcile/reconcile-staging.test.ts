/** The reconcile's ERP side staged in Redis (reconcile-staging.ts), against the real Redis under a prefix of its own. */
import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { createRedis } from '../../../../src/queue/connection.js';
import { ReconcileStaging } from '../../../../src/sync/inventory/reconcile/reconcile-staging.js';
import { deleteKeys, listKeys } from '../../../support/redis.js';
import { REDIS_URL } from '../harness.js';

const redis = createRedis(REDIS_URL);
const prefix = `test-${randomUUID()}`;

afterEach(async () => {
  await deleteKeys(redis, prefix);
});

afterAll(() => {
  redis.disconnect();
});

describe('ReconcileStaging', () => {
  it("keeps a SKU's records of every chunk and source, in the order the whole side had them, and leaves nothing once cleared", async () => {
    const staging = new ReconcileStaging(redis, prefix, ['erp-a', 'erp-b']);
    // Source a: A-1 in two chunks (two sites), B-1 once; source b: A-1 again, C-1.
    await staging.stage([
      { sku: 'A-1', source: 0, cursor: 1, fields: { Code: 'A-1', Stock: 5, SiteId: 1 } },
      { sku: 'B-1', source: 0, cursor: 2, fields: { Code: 'B-1', Stock: 6 } },
    ]);
    await staging.stage([{ sku: 'A-1', source: 0, cursor: 3, fields: { Code: 'A-1', Stock: 7, SiteId: 2 } }]);
    await staging.stage([
      { sku: 'C-1', source: 1, cursor: 'x', fields: { Code: 'C-1', Price: 9.5 } },
      { sku: 'A-1', source: 1, cursor: 'y', fields: { Code: 'A-1', Price: 4.25 } },
    ]);
    const erp = await staging.page(['C-1', 'A-1', 'Z-9']);
    // A-1's rows: source a's two, then source b's.
    const rows: Array<[string, unknown, unknown]> = [];
    for (let row = erp.first('A-1'); row !== undefined; row = erp.next(row)) rows.push([erp.source(row), erp.cursor(row), erp.fields(row)]);
    expect(rows).toEqual([
      ['erp-a', 1, { Stock: 5, SiteId: 1 }],
      ['erp-a', 3, { Stock: 7, SiteId: 2 }],
      ['erp-b', 'y', { Price: 4.25 }],
    ]);
    expect(erp.fields(erp.first('C-1')!)).toEqual({ Price: 9.5 });
    expect(erp.first('Z-9')).toBeUndefined();
    expect(erp.first('B-1')).toBeUndefined();
    // The SKUs in the order their first record was read.
    const order: string[] = [];
    for await (const skus of staging.skus()) order.push(...skus);
    expect(order).toEqual(['A-1', 'B-1', 'C-1']);
    // Marks: A-1 on site 2, B-1 on no site (a read without a site filter).
    await staging.markSeen(new Map([['A-1', new Set([2])], ['B-1', new Set<number>()]]));
    const seen = await staging.seen(['A-1', 'B-1', 'C-1'], [1, 2]);
    expect([...seen.any]).toEqual(['A-1', 'B-1']);
    expect([...(seen.on.get(2) ?? [])]).toEqual(['A-1']);
    expect(seen.on.get(1)).toBeUndefined();
    await staging.queue([{ source: 'erp-a', cursor: 1, sku: 'A-1 (site 1)', values: { Stock: 5 }, fields: ['Stock'], priority: 1 }]);
    const queued = [];
    for await (const chunk of staging.queued(10)) queued.push(...chunk);
    expect(queued).toEqual([{ source: 'erp-a', cursor: 1, sku: 'A-1 (site 1)', values: { Stock: 5 }, fields: ['Stock'], priority: 1 }]);
    expect((await listKeys(redis, prefix)).length).toBeGreaterThan(0);
    await staging.clear();
    expect(await listKeys(redis, prefix)).toEqual([]);
  });

  it('gives every staged SKU back, 1,000 at a time in the order first read, past the first chunk (2,500 SKUs)', async () => {
    const staging = new ReconcileStaging(redis, prefix, ['erp-a']);
    // The oracle: the Codes as staged, in that order (in two calls, the second adding to the first's order).
    const codes = Array.from({ length: 2500 }, (_, i) => `S-${String(2500 - i).padStart(4, '0')}`);
    await staging.stage(codes.slice(0, 1700).map((sku, i) => ({ sku, source: 0, cursor: i, fields: { Code: sku, Stock: i } })));
    await staging.stage(codes.slice(1700).map((sku, i) => ({ sku, source: 0, cursor: 1700 + i, fields: { Code: sku, Stock: 1700 + i } })));
    const chunks: string[][] = [];
    for await (const skus of staging.skus()) chunks.push(skus);
    expect(chunks.map((chunk) => chunk.length)).toEqual([1000, 1000, 500]);
    expect(chunks.flat()).toEqual(codes);
    // Exactly two full chunks: both given, and no empty third.
    await staging.clear();
    const exact = new ReconcileStaging(redis, prefix, ['erp-a']);
    await exact.stage(codes.slice(0, 2000).map((sku, i) => ({ sku, source: 0, cursor: i, fields: { Code: sku, Stock: i } })));
    const sizes: number[] = [];
    for await (const skus of exact.skus()) sizes.push(skus.length);
    expect(sizes).toEqual([1000, 1000]);
    await exact.clear();
  });
});
