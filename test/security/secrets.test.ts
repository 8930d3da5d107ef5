import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { deleteKeys, dumpPrefix } from '../support/redis.js';

// Characters that break naive URL building and naive redaction: &, +, #, %, space, non-ASCII.
const PASSWORD = `Sëcret&pa+ss#${randomUUID().slice(0, 8)} %x`;
const TOKEN = `admin-${randomUUID()}`;
const REDIS_URL = 'redis://127.0.0.1:6379/0';
const prefix = `test-${randomUUID()}`;
const dir = mkdtempSync(join(tmpdir(), 'storesync-secrets-'));
const redis = new Redis(REDIS_URL);

let sim: Simulator;
let daemon: Daemon | undefined;
let logs = '';
let metricsText = '';
let redisDump = new Map<string, string>();
const hashes = new Set<string>();
const saleIds: number[] = [];

/** Records every hash the simulator issues (they live 2 s and are forgotten once expired). */
function recordIssuedHashes(): void {
  const issued = sim.state.hashes;
  const set = issued.set.bind(issued);
  issued.set = (hash: string, at: number) => {
    hashes.add(hash);
    return set(hash, at);
  };
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, items: 20, sales: 0, password: PASSWORD, hashTtlS: 2 });
  recordIssuedHashes();
  for (let i = 0; i < 3; i += 1) saleIds.push(sim.addSale({ Status: 1, SiteId: 1 }).Id);
  const inventoryDir = join(dir, 'inventory');
  const shipmentsDir = join(dir, 'shipments');
  mkdirSync(inventoryDir);
  mkdirSync(shipmentsDir);
  writeFileSync(join(inventoryDir, 'stock.csv'), 'Code;Stock;Price\nSKU-000001;11;10.50\nSKU-000002;12;20.50\nSKU-000003;-4;30.50\n');
  writeFileSync(join(shipmentsDir, 'shipped.csv'), `SaleId;Status;TrackingCode\n${saleIds[0]};3;TRACK-1\n`);

  const config = loadConfig({
    env: { STORE_PASSWORD: PASSWORD, ADMIN_TOKEN: TOKEN },
    overrides: {
      store: { baseUrl: sim.url, username: 'demo', siteId: 1, retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 50 } },
      redis: { url: REDIS_URL, prefix },
      http: { port: 0 },
      // Everything the daemon can log, so that any leak would show.
      log: { level: 'trace' },
      inventory: {
        backoffMs: 50,
        sources: [{ name: 'csv', kind: 'csv', dir: inventoryDir, schedule: '*/1 * * * * *', settleMs: 0 }],
      },
      sales: { backoffMs: 50, pull: { schedule: '*/1 * * * * *' }, sink: { kind: 'file', dir: join(dir, 'sales') } },
      // Short backoffs everywhere: with 30 % of store calls failing, the default 2 s (doubling) of the
      // fulfillment queue could outlast the wait below on a loaded machine.
      fulfillment: { backoffMs: 50, sources: [{ name: 'shipments', kind: 'csv', dir: shipmentsDir, schedule: '*/1 * * * * *', settleMs: 0 }] },
      shutdown: { timeoutMs: 3000 },
    },
  });
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => (logs += line) } });
  daemon = await startDaemon({ config, logger }, { role: 'all' });

  // Admin traffic: a good resync request and a bad one, both logged (audit and warning).
  const resync = await fetch(`${daemon.url}/admin/resync/inventory`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ dryRun: true }),
  });
  expect(resync.status).toBe(202);
  await fetch(`${daemon.url}/admin/queues`, { headers: { authorization: `Bearer ${TOKEN}0` } });
  // A few store failures, so that errors (with their endpoints and bodies) are logged too.
  sim.faults.set({ failRate: 0.3 });
  let polls = 0;
  await waitFor(
    () => {
      // Expire the hashes now and then: the client must re-authenticate, which logs and stores nothing secret.
      polls += 1;
      if (polls % 10 === 0) sim.expireHashes();
      const written = new Set(sim.writes.map((w) => w.code));
      // Acknowledged: the ERP note was written. Its status is 2 unless the shipment (Status 3) got there first,
      // in which case the acknowledgement keeps the status the sale moved on to.
      const acked = new Set(sim.saleUpdates.filter((u) => /^ERP order /m.test(String(u.fields.Obeservations ?? ''))).map((u) => u.saleId));
      const shipped = sim.saleUpdates.some((u) => u.fields.TrackingCode === 'TRACK-1');
      const authAndErrorsLogged = /re-authenticat/.test(logs) && /retrying/.test(logs);
      return written.has('SKU-000001') && written.has('SKU-000002') && saleIds.every((id) => acked.has(id)) && shipped && authAndErrorsLogged;
    },
    {
      timeoutMs: 45_000,
      intervalMs: 100,
      message: 'the cycle: stock written, sales exported and acknowledged, shipment applied, a re-authentication',
    },
  );
  sim.faults.set({ failRate: 0 });
  metricsText = await (await fetch(`${daemon.url}/metrics`)).text();
  await daemon.close();
  daemon = undefined;
  redisDump = await dumpPrefix(redis, prefix);
}, 60_000);

afterAll(async () => {
  await daemon?.close();
  await sim?.close();
  await deleteKeys(redis, prefix);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** Every form a secret could be written in: as is, URL-encoded, form-encoded. */
function forms(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), new URLSearchParams({ x: secret }).toString().slice(2)])];
}

describe('secrets after a full cycle through the daemon', () => {
  it('ran a real cycle: logs, metrics and Redis state exist and several hashes were issued', () => {
    expect(logs.split('\n').length).toBeGreaterThan(20);
    // The paths most likely to leak were taken: logins, re-authentication after expiry, failed requests.
    expect(logs).toMatch(/logged in/);
    expect(logs).toMatch(/re-authenticat/);
    expect(logs).toMatch(/retrying/);
    expect(metricsText).toContain('storesync_store_requests_total');
    expect(redisDump.size).toBeGreaterThan(5);
    expect(hashes.size).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ['the store password', () => forms(PASSWORD)],
    ['the admin token', () => forms(TOKEN)],
    ['any auth hash the store issued', () => [...hashes]],
  ])('finds no trace of %s in the logs, /metrics or any Redis key or value', (_what, secrets) => {
    for (const secret of secrets()) {
      expect(logs.includes(secret), `in the logs: ${secret}`).toBe(false);
      expect(metricsText.includes(secret), `in /metrics: ${secret}`).toBe(false);
      for (const [key, value] of redisDump) expect(`${key} ${value}`.includes(secret), `in Redis key ${key}`).toBe(false);
    }
  });
});
