import { afterEach, describe, expect, it } from 'vitest';

import { createLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { StoreAuthError, StoreNotFoundError } from '../../src/store/errors.js';
import { startFakeRemote } from './fake-remote.js';
import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture | undefined;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

describe('store login', () => {
  it('logs in once and reuses the hash, emitting store:auth and counting the login', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    fixture = await storeFixture({}, { metrics });
    const auth = fixture.client.events.next('store:auth');
    await fixture.client.inventory.get({ code: 'SKU-000001' });
    await fixture.client.sales.list({ limit: 1 });
    expect(await auth).toMatchObject({ outcome: 'success' });
    expect(fixture.sim.counters().logins).toBe(1);
    expect(await metrics.render()).toContain('storesync_store_logins_total{outcome="success"} 1');
  });

  it('URL-encodes credentials containing &, +, # and accents', async () => {
    fixture = await storeFixture({ username: 'josé@tienda.ar', password: 'p&ss+w#rd=ñ 1' });
    await fixture.client.login();
    expect(fixture.sim.counters()).toMatchObject({ logins: 1, failedLogins: 0 });
  });

  it('fails a wrong password with one StoreAuthError and one login attempt, never a loop', async () => {
    fixture = await storeFixture();
    const client = fixture.newClient({ store: { password: 'wrong-password' } });
    const failed = client.events.next('store:auth');
    const error = await client.sales.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreAuthError);
    expect((error as StoreAuthError).message).toContain('GET /Api/Auth/');
    expect((error as StoreAuthError).message).toMatch(/wrong username or password/);
    expect(await failed).toMatchObject({ outcome: 'failure' });
    expect(fixture.sim.counters()).toMatchObject({ failedLogins: 1, logins: 0 });
    expect(fixture.sim.counters().requests['GET /Api/Sale']).toBeUndefined();
  });

  it('reports an auth answer with another status or no hash as a failed login with "status - message"', async () => {
    const fake = await startFakeRemote((request) =>
      request.path === '/Api/Auth/' ? { body: { status: '2', message: 'Usuario bloqueado', data: '' } } : undefined,
    );
    cleanups.push(() => fake.close());
    fixture = await storeFixture();
    const client = fixture.newClient({ store: { baseUrl: fake.url } });
    await expect(client.login()).rejects.toThrow(/2 - Usuario bloqueado/);
    await expect(client.login()).rejects.toBeInstanceOf(StoreAuthError);
  });

  it('re-authenticates once when 50 concurrent requests meet an expired hash', async () => {
    fixture = await storeFixture();
    await fixture.client.login();
    fixture.sim.expireHashes();
    fixture.sim.resetCounters();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => fixture!.client.inventory.get({ code: `SKU-${String(i + 1).padStart(6, '0')}` })),
    );
    expect(results.every((items) => items.length === 1)).toBe(true);
    const counters = fixture.sim.counters();
    expect(counters.logins).toBe(1);
    expect(counters.unauthorized).toBe(50);
    expect(counters.requests['GET /Api/Inventory/Get']).toBe(100);
  });

  it('logs in once when 20 requests start together on a new client', async () => {
    fixture = await storeFixture();
    await Promise.all(Array.from({ length: 20 }, () => fixture!.client.sales.list({ limit: 1 })));
    expect(fixture.sim.counters()).toMatchObject({ logins: 1, unauthorized: 0 });
  });

  it('re-authenticates after the hash lifetime set on the simulator runs out', async () => {
    let clock = Date.now();
    fixture = await storeFixture({ hashTtlS: 60, now: () => clock });
    await fixture.client.sales.list({ limit: 1 });
    clock += 61_000;
    await fixture.client.sales.list({ limit: 1 });
    expect(fixture.sim.counters()).toMatchObject({ logins: 2, unauthorized: 1 });
  });

  it('renews the hash proactively after authRefreshMs, before the store refuses it', async () => {
    let clock = 1_000_000;
    fixture = await storeFixture({}, { now: () => clock, store: { authRefreshMs: 60_000 } });
    await fixture.client.sales.list({ limit: 1 });
    clock += 59_000;
    await fixture.client.sales.list({ limit: 1 });
    expect(fixture.sim.counters().logins).toBe(1);
    clock += 2_000;
    await fixture.client.sales.list({ limit: 1 });
    expect(fixture.sim.counters()).toMatchObject({ logins: 2, unauthorized: 0 });
  });

  it('gives up with StoreAuthError when the store refuses even the fresh hash', async () => {
    let logins = 0;
    const fake = await startFakeRemote((request) => {
      if (request.path === '/Api/Auth/') {
        logins += 1;
        return { body: { status: '0', message: 'OK', data: `fresh-hash-${logins}` } };
      }
      return { status: 401, body: { Success: false, Message: 'Invalid or expired hash' } };
    });
    cleanups.push(() => fake.close());
    fixture = await storeFixture();
    const client = fixture.newClient({ store: { baseUrl: fake.url } });
    await expect(client.sales.list()).rejects.toThrow(/refused again right after re-authentication/);
    expect(logins).toBe(2);
  });

  it('keeps the password and the hash out of logs and error messages', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void lines.push(line) } });
    const password = 'S3cret-Pa55word!';
    fixture = await storeFixture({ password }, { logger });
    await fixture.client.login();
    const [hash] = [...fixture.sim.state.hashes.keys()];
    expect(hash).toBeTruthy();
    fixture.sim.expireHashes();
    await fixture.client.sales.list({ limit: 1 });
    const error = await fixture.client.sales.get(987654).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreNotFoundError);
    const wrong = fixture.newClient({ logger, store: { password: 'Wr0ng-Pa55word!' } });
    const loginError = await wrong.login().catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    const text = [...lines, (error as Error).message, (error as Error).stack, (loginError as Error).message].join('\n');
    expect(lines.length).toBeGreaterThan(3);
    expect(text).toContain('/Api/Sale/{id}');
    for (const secret of [password, encodeURIComponent(password), hash!, 'Wr0ng-Pa55word!']) expect(text).not.toContain(secret);
  });
});
