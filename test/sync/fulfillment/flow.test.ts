import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { ChangeBatch, ChangeSource, SourceRecord } from '../../../src/erp/types.js';
import { QUEUE_NAMES } from '../../../src/queue/connection.js';
import { StoreNotFoundError } from '../../../src/store/errors.js';
import { applyFulfillment } from '../../../src/sync/fulfillment/apply-update.js';
import { type FulfillmentFlow, startFulfillmentFlow, updateSale } from '../../../src/sync/fulfillment/index.js';
import { pollFulfillmentSource } from '../../../src/sync/fulfillment/producer.js';
import { openFulfillmentRuntime } from '../../../src/sync/fulfillment/runtime.js';
import { waitFor } from '../../../src/wait-for.js';
import { type Harness, startHarness, updatesBySale } from '../sales/harness.js';

describe('fulfillment flow', () => {
  let h: Harness;
  let dir: string;
  let flow: FulfillmentFlow | undefined;
  let fileNumber = 0;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storesync-fulfil-'));
    h = await startHarness({
      config: {
        fulfillment: {
          sources: [{ name: 'shipments', kind: 'csv', dir, schedule: '0 0 0 1 1 *', settleMs: 0, delimiter: ',' }],
        },
      },
    });
    for (const [id, status, text] of [
      [11, 1, 'Confirmada'],
      [12, 2, 'En proceso'],
      [13, 6, 'Entregada'],
      [14, -2, 'Cancelada'],
    ] as const) {
      h.sim.addSale({ Id: id, SiteId: 1, Status: status, StatusText: text, TrackingCode: '', ExternalReference: `ERP-${id}`, CreationDate: h.storeDate(60) });
    }
  });

  afterEach(async () => {
    await flow?.close();
    flow = undefined;
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Drops a CSV file, older each time so the source reads the files in the order written. */
  async function dropCsv(lines: string[]): Promise<void> {
    fileNumber += 1;
    const file = join(dir, `ship-${fileNumber}.csv`);
    await writeFile(file, `${lines.join('\n')}\n`);
    const at = new Date(Date.now() - 60_000 + fileNumber * 1000);
    await utimes(file, at, at);
  }

  async function start(): Promise<FulfillmentFlow> {
    flow = await startFulfillmentFlow(h.deps, { role: 'all' });
    return flow;
  }

  it('applies the status and tracking code from a CSV drop to the store sale and moves the file', async () => {
    await dropCsv(['SaleId,Status,TrackingCode', '11,3,TN123456789AR']);
    const f = await start();
    const done = f.events.next('fulfillment:job:done');
    expect(await f.poll('shipments')).toMatchObject({ read: 1, rejected: 0, queued: 1 });
    expect(await done).toEqual({ saleId: 11, outcome: 'updated', changed: ['Status', 'TrackingCode'] });
    // The complete update structure: the status with its text, and the sale's other fields as they were.
    expect(updatesBySale(h.sim).get(11)).toEqual([expect.objectContaining({ Status: 3, StatusText: 'Completed', TrackingCode: 'TN123456789AR', Message: expect.any(String) })]);
    expect(await readdir(dir)).toEqual(['processed']);
  });

  it('keeps the store error class, with the sale in its message, when the sale to update does not exist', async () => {
    const error = await updateSale(h.deps, 99_999, { Status: 3 }).catch((e: unknown) => e);
    // Code that branches on the class (the workers: a 404 is permanent) still sees a StoreNotFoundError.
    expect(error).toBeInstanceOf(StoreNotFoundError);
    expect(error).toMatchObject({ code: 'ERR_STORE_NOT_FOUND', retryable: false, status: 404 });
    expect((error as Error).message).toMatch(/^sale 99999: cannot read it from the store: GET /);
  });

  it('merges the records of one sale in a batch so the latest status wins', async () => {
    await dropCsv(['SaleId,Status,TrackingCode', '12,3,', '12,6,TN1']);
    const f = await start();
    const done = f.events.next('fulfillment:job:done');
    expect(await f.poll('shipments')).toMatchObject({ read: 2, queued: 1 });
    await done;
    expect(updatesBySale(h.sim).get(12)).toEqual([expect.objectContaining({ Status: 6, StatusText: 'Delivered', TrackingCode: 'TN1' })]);
  });

  it('sends the same update only once, whether it arrives twice or is applied again by hand', async () => {
    await dropCsv(['SaleId,Status,TrackingCode', '11,3,TN1']);
    const f = await start();
    const done = f.events.next('fulfillment:job:done');
    await f.poll('shipments');
    await done;
    await dropCsv(['SaleId,Status,TrackingCode', '11,3,TN1']);
    await f.poll('shipments');
    const queue = new Queue(QUEUE_NAMES.fulfillment, { connection: h.redis, prefix: h.prefix });
    try {
      const counts = await queue.getJobCounts('completed', 'waiting', 'active', 'delayed');
      expect(counts).toEqual({ completed: 1, waiting: 0, active: 0, delayed: 0 });
    } finally {
      await queue.close();
    }
    expect(await updateSale(h.deps, 11, { Status: 3, TrackingCode: 'TN1' })).toEqual({ saleId: 11, outcome: 'unchanged', changed: [] });
    expect(updatesBySale(h.sim).get(11)).toHaveLength(1);
  });

  it('rejects an unknown status with a clear reason, a failed job and a metric, sending nothing', async () => {
    await dropCsv(['SaleId,Status', '11,9']);
    const f = await start();
    const failed = f.events.next('fulfillment:job:failed');
    await f.poll('shipments');
    const { error, willRetry } = await failed;
    expect(willRetry).toBe(false);
    expect(error.message).toBe(
      'ERR_VALIDATION: shipment update refused: sale 11: field Status = 9 breaks "a sale status of this store (allowed: 0, 1, 2, 3, 6, -1, -2; see fulfillment.statuses)"',
    );
    expect((await h.metrics.jobs.get()).values).toContainEqual(expect.objectContaining({ labels: { queue: 'fulfillment', outcome: 'rejected' }, value: 1 }));
    const queue = new Queue(QUEUE_NAMES.fulfillment, { connection: h.redis, prefix: h.prefix });
    try {
      await waitFor(async () => (await queue.getFailedCount()) === 1, { message: 'one failed job' });
      const [job] = await queue.getFailed();
      expect(job!.name).toBe('fulfil:11');
      expect(job!.failedReason).toMatch(/field Status = 9 breaks "a sale status of this store/);
    } finally {
      await queue.close();
    }
    expect(h.sim.saleUpdates).toHaveLength(0);
  });

  it('keeps a delivered or cancelled sale in its status unless forced, but still takes a tracking code', async () => {
    await dropCsv(['SaleId,Status,TrackingCode', '13,3,', '14,1,']);
    const f = await start();
    const reasons: string[] = [];
    f.events.on('fulfillment:job:failed', ({ error }) => reasons.push(error.message));
    await f.poll('shipments');
    await waitFor(() => reasons.length === 2, { message: 'two refusals' });
    expect(reasons.sort()).toEqual([
      'ERR_VALIDATION: shipment update refused: sale 13: field Status = 3 breaks "no move out of the final status 6 (Entregada) without force"',
      'ERR_VALIDATION: shipment update refused: sale 14: field Status = 1 breaks "no move out of the final status -2 (Cancelada) without force"',
    ]);
    expect(h.sim.saleUpdates).toHaveLength(0);

    expect(await updateSale(h.deps, 13, { TrackingCode: 'TN9' })).toMatchObject({ outcome: 'updated', changed: ['TrackingCode'] });
    expect(await updateSale(h.deps, 13, { Status: 3 }, { force: true })).toMatchObject({ outcome: 'updated', changed: ['Status'] });
    expect(updatesBySale(h.sim).get(13)).toEqual([
      expect.objectContaining({ Status: 6, StatusText: 'Entregada', TrackingCode: 'TN9' }),
      expect.objectContaining({ Status: 3, StatusText: 'Completed', TrackingCode: 'TN9' }),
    ]);
  });

  it('honours a store with custom statuses through fulfillment.statuses', async () => {
    await h.close();
    h = await startHarness({ config: { store: { statusTexts: { 7: 'Retirado en sucursal' } }, fulfillment: { statuses: [0, 1, 2, 3, 6, 7, -1, -2] } } });
    h.sim.addSale({ Id: 21, SiteId: 1, Status: 3, CreationDate: h.storeDate(5) });
    expect(await updateSale(h.deps, 21, { Status: 7 })).toMatchObject({ outcome: 'updated' });
    expect(h.sim.state.salesById.get(21)!.sale).toMatchObject({ Status: 7, StatusText: 'Retirado en sucursal' });
  });

  it('resolves ExternalReference and SiteId to the sale id and skips an update older than the one applied', async () => {
    const rt = openFulfillmentRuntime(h.deps);
    const record = (ref: string, fields: Record<string, unknown>, cursor: number): SourceRecord => ({ ref, cursor, fields });
    const batches: ChangeBatch[] = [
      {
        records: [
          record('row 1', { ExternalReference: 'ERP-12', SiteId: 1, Status: 3 }, 20),
          record('row 2', { ExternalReference: 'NOPE', SiteId: 1, Status: 3 }, 21),
          record('row 3', { SaleId: 11 }, 22),
        ],
        rejected: [],
        nextCursor: 22,
      },
    ];
    const source: ChangeSource = {
      name: 'erp-api',
      kind: 'http',
      readChanges: async () => batches.shift() ?? { records: [], rejected: [], nextCursor: 22 },
      close: async () => undefined,
    };
    try {
      expect(await pollFulfillmentSource(rt, source, { limit: 100 })).toMatchObject({ read: 3, rejected: 2, queued: 1, cursor: 22 });
      const [job] = await rt.queue.getWaiting();
      expect(job!.data).toMatchObject({ saleId: 12, update: { Status: 3 }, version: 20 });
      expect((await h.metrics.erpRecordsRejected.get()).values.map((v) => v.labels.reason).sort()).toEqual([
        'at least one of Status, StatusText, TrackingCode, Obeservations',
        'the reference of exactly one store sale',
      ]);

      expect(await applyFulfillment(rt, { saleId: 12, update: { Status: 3 }, version: 30 })).toMatchObject({ outcome: 'updated' });
      expect(await applyFulfillment(rt, { saleId: 12, update: { Status: 2 }, version: 25 })).toMatchObject({ outcome: 'stale' });
      expect(updatesBySale(h.sim).get(12)).toEqual([expect.objectContaining({ Status: 3, StatusText: 'Completed' })]);
    } finally {
      await rt.close();
    }
  });
});
