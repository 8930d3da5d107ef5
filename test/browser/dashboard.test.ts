import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { packageRoot } from '../../src/config/load.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { type Simulator,startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { logCollector, testConfig, testPrefix } from '../ops/helpers.js';
import { deleteKeys } from '../support/redis.js';

const CHROMIUM = '/usr/bin/chromium';
const ADMIN = { username: 'admin', password: 'browser-test-password-77' };
const prefix = testPrefix();
const redis = new Redis('redis://127.0.0.1:6379/0');
const logs = logCollector('info');
let sim: Simulator;
let daemon: Daemon;
let browser: Browser;
const salesDir = mkdtempSync(join(tmpdir(), 'storesync-dashboard-sales-'));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install the Debian package "chromium" (.ci/run does) to run the dashboard test`);
  }
  sim = await startSimulator({ port: 0 });
  const config = testConfig({
    redis: { prefix },
    store: { baseUrl: sim.url, username: 'demo', password: 'demo-password', siteId: 1 },
    admin: ADMIN,
    // A sink makes the sales flow run (its queue is on the dashboard); no pull schedule, so no sale is touched.
    sales: { enabled: false, sink: { kind: 'file', dir: salesDir } },
  });
  daemon = await startDaemon({ config, logger: logs.logger }, { role: 'all' });
  // launch() gives every run a fresh temporary profile.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  await daemon?.close();
  await sim?.close();
  await deleteKeys(redis, prefix);
  redis.disconnect();
  rmSync(salesDir, { recursive: true, force: true });
});

describe('admin dashboard in a browser', () => {
  it('refuses the page without credentials', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const statuses: number[] = [];
      const challenges: Array<string | undefined> = [];
      page.on('response', (response) => {
        statuses.push(response.status());
        challenges.push(response.headers()['www-authenticate']);
      });
      // Headless Chromium cannot answer the Basic challenge, so the navigation itself fails.
      const navigation = await page.goto(`${daemon.url}/admin/queues`).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(navigation?.message).toContain('ERR_INVALID_AUTH_CREDENTIALS');
      expect(challenges).toEqual([expect.stringMatching(/^Basic /)]);
      expect(statuses).toEqual([401]);
    } finally {
      await context.close();
    }
  });

  it('shows the queues and runs an inventory resync added through the Add-job form of the control queue', async () => {
    const context = await browser.newContext({ httpCredentials: ADMIN, viewport: { width: 1400, height: 900 } });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${daemon.url}/admin/queues`);
      expect(response?.status()).toBe(200);
      // Every queue of the running flows (the sales flow is off in this configuration, so it has none).
      const queues = daemon.flows.flatMap((flow) => flow.queues.map((queue) => queue.name));
      expect(queues).toEqual(expect.arrayContaining(['control', 'inventory', 'fulfillment']));
      for (const queue of queues) {
        await page.getByRole('link', { name: queue, exact: true }).first().waitFor();
      }

      await page.getByRole('link', { name: 'control', exact: true }).first().click();
      await page.locator('button[aria-haspopup="menu"]').last().click();
      await page.getByRole('menuitem', { name: 'Add job' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText('Job data').waitFor();
      // The form starts from the schema's default (a full reconcile); narrow it to one SKU, dry.
      await expect.poll(() => dialog.locator('.cm-content').first().innerText()).toContain('inventory-reconcile');
      await dialog.locator('.cm-content').first().click();
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.insertText(JSON.stringify({ action: 'inventory-reconcile', skus: ['SKU-000001'], dryRun: true }, null, 2));
      await dialog.getByRole('button', { name: 'Add' }).click();

      const job = await waitFor(async () => {
        const [done] = await daemon.control.queue.getJobs(['completed'], 0, 0);
        return done;
      }, { timeoutMs: 20_000, message: 'the resync job to complete' });
      expect(job.name).toBe('reconcile:dry-run:SKU-000001');
      expect(job.data).toMatchObject({ action: 'inventory-reconcile', skus: ['SKU-000001'], dryRun: true, requestedBy: 'admin' });
      expect(job.returnvalue).toMatchObject({ dryRun: true });

      await page.getByText('COMPLETED', { exact: true }).click();
      await page.getByText('reconcile:dry-run:SKU-000001').first().waitFor();
      mkdirSync(join(packageRoot(), 'test-output'), { recursive: true });
      await page.screenshot({ path: join(packageRoot(), 'test-output', 'dashboard.png'), fullPage: true });
      expect(logs.lines().some((line) => line.audit === true && line.action === 'dashboard:add' && line.user === 'admin')).toBe(true);
    } finally {
      await context.close();
    }
  });
});
