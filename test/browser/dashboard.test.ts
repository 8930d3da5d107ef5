import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { packageRoot } from '../../src/config/load.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { type Simulator,startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { logCollector, testConfig, testPrefix } from '../ops/helpers.js';
import { deleteKeys } from '../support/redis.js';

const CHROMIUM = '/usr/bin/chromium';
// Only a token, as the user had: the login page is the browser's way in.
const TOKEN = 'browser-test-token-0123456789';
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
    admin: { token: TOKEN },
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

/** Hosts a request may go to: this machine. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A browser context in which every request leaving the machine is aborted and recorded, as is every
 * Content-Security-Policy violation (what the page tried to load and was refused).
 */
async function offlineContext(): Promise<{ context: BrowserContext; outside: string[]; refused: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const outside: string[] = [];
  const refused: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (LOOPBACK.has(url.hostname)) return route.continue();
    outside.push(url.href);
    return route.abort('blockedbyclient');
  });
  context.on('console', (message) => {
    if (message.type() === 'error' && message.text().includes('Content Security Policy')) refused.push(message.text());
  });
  return { context, outside, refused };
}

describe('admin dashboard in a browser, with only admin.token configured', () => {
  it('sends a browser without a session to the login page, which refuses a wrong token', async () => {
    const { context, outside, refused } = await offlineContext();
    try {
      const page = await context.newPage();
      const response = await page.goto(`${daemon.url}/admin/queues`);
      expect(response?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/admin/login');
      await page.getByLabel('Admin token').fill(`${TOKEN}-wrong`);
      const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Log in' }).click()]);
      expect(answer.status()).toBe(401);
      await page.getByRole('alert').getByText('Wrong token or password.').waitFor();
      expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('storesync_admin');
      expect(outside).toEqual([]);
      expect(refused).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('logs in with the token, shows the queues and runs an inventory resync added through the Add-job form, loading nothing from outside', async () => {
    const { context, outside, refused } = await offlineContext();
    try {
      const page = await context.newPage();
      await page.goto(`${daemon.url}/admin/queues`);
      await page.getByLabel('Admin token').fill(TOKEN);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${daemon.url}/admin/queues`);
      const [session] = (await context.cookies()).filter((cookie) => cookie.name === 'storesync_admin');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
      expect(session?.value).not.toContain(TOKEN);

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
      expect(job.data).toMatchObject({ action: 'inventory-reconcile', skus: ['SKU-000001'], dryRun: true, requestedBy: 'token' });
      expect(job.returnvalue).toMatchObject({ dryRun: true });

      await page.getByText('COMPLETED', { exact: true }).click();
      await page.getByText('reconcile:dry-run:SKU-000001').first().waitFor();
      mkdirSync(join(packageRoot(), 'test-output'), { recursive: true });
      await page.screenshot({ path: join(packageRoot(), 'test-output', 'dashboard.png'), fullPage: true });
      expect(logs.lines().some((line) => line.audit === true && line.action === 'dashboard:add' && line.user === 'token')).toBe(true);
      expect(outside).toEqual([]);
      expect(refused).toEqual([]);

      // Logging out ends the session: the dashboard sends the browser to the login page again.
      await page.goto(`${daemon.url}/admin/login`);
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.waitForURL(`${daemon.url}/admin/login`);
      await page.goto(`${daemon.url}/admin/queues`);
      expect(new URL(page.url()).pathname).toBe('/admin/login');
    } finally {
      await context.close();
    }
  });
});
