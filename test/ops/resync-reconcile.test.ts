/**
 * The whole path of an operator's resync: POST /admin/resync/inventory on the daemon's HTTP server → a control job →
 * the real inventory reconcile (ERP snapshot against the simulated store) → inventory jobs → the worker's PUT and POST.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type Daemon, startDaemon } from '../../src/daemon.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { deleteKeys } from '../support/redis.js';
import { logCollector, testConfig, testPrefix } from './helpers.js';

const TOKEN = 'resync-test-token-0123456789';
const NEVER = '0 0 0 1 1 *';
const CREATE_PATH = '/Api/Inventory/Create';

let dir: string;
let prefix: string;
let sim: Simulator;
let daemon: Daemon | undefined;
const redis = new Redis('redis://127.0.0.1:6379/0');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'storesync-resync-'));
  prefix = testPrefix();
  // This store takes item creation at a path of its own: the client must POST there.
  sim = await startSimulator({
    port: 0,
    items: [
      { Code: 'RS-1', Stock: 5, Price: 10 },
      { Code: 'RS-2', Stock: 8, Price: 20 },
    ],
    sales: 0,
    inventoryCreatePath: CREATE_PATH,
  });
});

afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
  await sim.close();
  await deleteKeys(redis, prefix);
  await rm(dir, { recursive: true, force: true });
});

/** A daemon whose ERP is a CSV snapshot (`rows`), plus a second source that is configured but disabled. */
async function start(rows: string, inventory: Record<string, unknown> = {}): Promise<Daemon> {
  const snapshotFile = join(dir, 'all-items.csv');
  await writeFile(snapshotFile, `Code,Stock,Price\n${rows}`);
  const config = testConfig({
    redis: { prefix },
    store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1, inventoryCreatePath: CREATE_PATH },
    admin: { token: TOKEN },
    sales: { enabled: false },
    inventory: {
      backoffMs: 10,
      sources: [
        { name: 'erp-csv', kind: 'csv', dir: join(dir, 'drop'), schedule: NEVER, settleMs: 0, snapshotFile },
        { name: 'old-erp', kind: 'csv', dir: join(dir, 'old'), schedule: NEVER, enabled: false, snapshotFile: join(dir, 'missing.csv') },
      ],
      ...inventory,
    },
  });
  daemon = await startDaemon({ config, logger: logCollector('info').logger }, { role: 'all' });
  return daemon;
}

/** POSTs a resync and resolves with the finished control job. */
async function resync(d: Daemon, body: Record<string, unknown>) {
  const response = await fetch(`${d.url}/admin/resync/inventory`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(202);
  const { jobId } = (await response.json()) as { jobId: string };
  return waitFor(
    async () => {
      const job = await d.control.queue.getJob(jobId);
      return job?.finishedOn ? job : undefined;
    },
    { message: `control job ${jobId}` },
  );
}

describe('an inventory resync posted to the HTTP server', () => {
  it('reconciles through the control queue: fixes a drifted item and creates a missing one at store.inventoryCreatePath', async () => {
    const d = await start('RS-1,5,10\nRS-2,9,20\nRS-3,4,30\n', { createMissing: true });
    const written = waitFor(() => sim.writes.length >= 2 && sim.writes, { message: 'the PUT and the POST' });

    const job = await resync(d, { dryRun: false });
    expect(job.failedReason).toBeUndefined();
    // Only the enabled source is read; the disabled one (whose snapshot file does not exist) is left alone.
    expect(job.returnvalue).toMatchObject({ sources: ['erp-csv'], erpRecords: 3, storeItems: 2, missingOnStore: 1, queued: 2 });

    const writes = await written;
    expect(writes.map((w) => [w.code, w.op, w.fields]).sort()).toEqual([
      ['RS-2', 'update', { Stock: 9 }],
      ['RS-3', 'create', expect.objectContaining({ Stock: 4, Price: 30 })],
    ]);
    expect(sim.state.items.get('RS-3')?.item).toMatchObject({ Stock: 4, Price: 30 });
    const requests = sim.counters().requests;
    expect(requests[`POST ${CREATE_PATH}`]).toBe(1);
    expect(requests['POST /Api/Inventory']).toBeUndefined();
  });

  it('reconciles the one source named, as `resync inventory --source NAME` does', async () => {
    const d = await start('RS-1,5,10\nRS-2,9,20\n');
    const named = await resync(d, { source: 'erp-csv', dryRun: true });
    expect(named.name).toBe('reconcile:dry-run:source=erp-csv');
    expect(named.returnvalue).toMatchObject({ sources: ['erp-csv'], differences: 1 });
    // Not the whole configuration: a source no one configured fails the job, naming it.
    const unknown = await resync(d, { source: 'nope', dryRun: true });
    expect(unknown.failedReason).toMatch(/no source named "nope"/);
  });

  it('queues every field of every item with force, only the differences without', async () => {
    const d = await start('RS-1,5,10\nRS-2,9,20\n');
    const plain = await resync(d, { dryRun: true });
    expect(plain.returnvalue).toMatchObject({ differences: 1, queued: 1 });
    const forced = await resync(d, { dryRun: true, force: true });
    expect(forced.returnvalue).toMatchObject({ differences: 1, queued: 2 });
    expect(forced.data).toMatchObject({ force: true, dryRun: true });
    expect(sim.writes).toEqual([]);
  });

  it('acts on store items no ERP source has past the guard only when the resync confirms them', async () => {
    for (let i = 0; i < 12; i++) sim.upsertItem({ Code: `ORPH-${i}`, Stock: 3, Price: 10 });
    const d = await start('RS-1,5,10\nRS-2,8,20\n', { reconcile: { orphans: 'zero' } });
    const held = await resync(d, { dryRun: true });
    expect(held.returnvalue).toMatchObject({ onlyOnStore: 12, orphans: { checked: true, toChange: 12, held: 12, queued: 0 }, queued: 0 });
    const confirmed = await resync(d, { dryRun: true, confirmOrphans: true });
    expect(confirmed.name).toBe('reconcile:dry-run:confirm-orphans');
    expect(confirmed.returnvalue).toMatchObject({ orphans: { held: 0, queued: 12 }, queued: 12 });
    expect(sim.writes).toEqual([]);
  });

  it('reports a missing item without creating it when createMissing is off', async () => {
    const d = await start('RS-1,5,10\nRS-3,4,30\n');
    const job = await resync(d, { dryRun: false });
    expect(job.returnvalue).toMatchObject({ erpRecords: 2, missingOnStore: 1, missingSample: ['RS-3'], queued: 0 });
    expect(sim.state.items.has('RS-3')).toBe(false);
    expect(sim.counters().requests[`POST ${CREATE_PATH}`]).toBeUndefined();
  });
});
