import { afterEach, describe, expect, it } from 'vitest';

import { storeSchema } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { StoreClient } from '../../src/store/client.js';
import { StoreLoginDeferredError, StoreLoginRefusedError } from '../../src/store/errors.js';
import type { LoginAdmission, LoginGate } from '../../src/store/login-gate.js';
import { logCollector } from '../ops/helpers.js';
import { type FakeRemote, startFakeRemote } from './fake-remote.js';
import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture | undefined;
let fake: FakeRemote | undefined;

afterEach(async () => {
  await fixture?.close();
  await fake?.close();
  fixture = undefined;
  fake = undefined;
});

/** A store whose login accepts only `password.current`, and answers any other request with an empty list. */
async function storeWithPassword(password: { current: string }): Promise<FakeRemote> {
  return startFakeRemote((request) => {
    if (request.path !== '/Api/Auth/') return { body: [] };
    if (request.query.get('password') !== password.current) return { status: 401, body: { Success: false, Message: 'Usuario o clave incorrectos' } };
    return { body: { status: '0', message: 'OK', data: `hash-${request.query.get('password')}` } };
  });
}

const logins = (remote: FakeRemote): number => remote.requests.filter((request) => request.path === '/Api/Auth/').length;

describe('store session after refused credentials', () => {
  it('fails every call at once during the pause, without a request, and tries one login after it', async () => {
    let clock = 1_000_000;
    fixture = await storeFixture({}, { now: () => clock, store: { password: 'wrong-password', loginBackoff: { baseDelayMs: 5000, maxDelayMs: 60_000 } } });
    const first = await fixture.client.sales.list().catch((e: unknown) => e);
    expect(first).toBeInstanceOf(StoreLoginRefusedError);
    expect((first as StoreLoginRefusedError).retryAfterMs).toBe(5000);
    expect((first as Error).message).toMatch(/wrong username or password; store traffic paused, next login attempt in 5 s/);

    const during = await Promise.all(Array.from({ length: 20 }, () => fixture!.client.inventory.get({ code: 'SKU-000001' }).catch((e: unknown) => e)));
    expect(during.every((error) => error instanceof StoreLoginRefusedError)).toBe(true);
    expect((during[0] as StoreLoginRefusedError).message).toMatch(/store traffic paused: the store refused the credentials/);
    expect(fixture.sim.counters()).toMatchObject({ failedLogins: 1, total: 1 });

    clock += 4000;
    expect(((await fixture.client.login().catch((e: unknown) => e)) as StoreLoginRefusedError).retryAfterMs).toBe(1000);
    expect(fixture.sim.counters().failedLogins).toBe(1);

    clock += 1000;
    const again = await Promise.all(Array.from({ length: 8 }, () => fixture!.client.sales.list().catch((e: unknown) => e)));
    expect(fixture.sim.counters().failedLogins).toBe(2);
    // The backoff doubles with each refusal in a row.
    expect(again.map((error) => (error as StoreLoginRefusedError).retryAfterMs)).toEqual(Array(8).fill(10_000));
  });

  it('doubles the wait up to loginBackoff.maxDelayMs', async () => {
    let clock = 1_000_000;
    fixture = await storeFixture({}, { now: () => clock, store: { password: 'wrong-password', loginBackoff: { baseDelayMs: 1000, maxDelayMs: 5000 } } });
    const waits: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const error = (await fixture.client.login().catch((e: unknown) => e)) as StoreLoginRefusedError;
      waits.push(error.retryAfterMs);
      clock += error.retryAfterMs;
    }
    expect(waits).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(fixture.sim.counters().failedLogins).toBe(5);
  });

  it('logs one error line when traffic pauses, a warning per further refusal, and one line when it resumes', async () => {
    const password = { current: 'right-password' };
    fake = await storeWithPassword(password);
    fixture = await storeFixture();
    const logs = logCollector('info');
    const metrics = new Metrics({ defaultMetrics: false });
    let clock = 1_000_000;
    const client = fixture.newClient({
      logger: logs.logger,
      metrics,
      now: () => clock,
      store: { baseUrl: fake.url, password: 'old-password', loginBackoff: { baseDelayMs: 1000, maxDelayMs: 60_000 } },
    });
    await Promise.all(Array.from({ length: 30 }, () => client.sales.list().catch(() => undefined)));
    clock += 1000;
    await Promise.all(Array.from({ length: 30 }, () => client.sales.list().catch(() => undefined)));
    expect(logins(fake)).toBe(2);

    // The store's password changes to the one configured: the next login after the pause is accepted.
    password.current = 'old-password';
    clock += 2000;
    await Promise.all(Array.from({ length: 30 }, () => client.sales.list()));
    expect(logins(fake)).toBe(3);

    const lines = logs.lines().filter((line) => line.component === 'store');
    const errors = lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ refusals: 1, retryInMs: 1000 });
    expect(errors[0]?.msg).toBe('store refused the credentials (store.username, store.password): store traffic paused, jobs wait; next login attempt in 1 s');
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.msg)).toEqual(['store refused the credentials again; next login attempt in 2 s']);
    expect(lines.filter((line) => line.msg === 'store accepted the credentials: store traffic resumed')).toHaveLength(1);
    expect(logs.text()).not.toContain('old-password');
    const text = await metrics.render();
    expect(text).toContain('storesync_store_auth_failures_total 2');
    expect(text).toContain('storesync_store_logins_total{outcome="failure"} 2');
  });

  it('waits for a login under way elsewhere, and never waits in place for a spent login budget', async () => {
    fixture = await storeFixture();
    const answers: LoginAdmission[] = [{ waitMs: 5, reason: 'busy' }, { waitMs: 5, reason: 'busy' }];
    let released = 0;
    const gate: LoginGate = {
      tryAcquire: async () => answers.shift() ?? { permit: { release: () => void (released += 1) } },
    };
    const client = new StoreClient({ config: storeSchema.parse({ baseUrl: fixture.sim.url, username: 'demo', password: 'demo-password' }), logger: silentLogger(), loginGate: gate });
    await client.login();
    await client.close();
    expect(answers).toEqual([]);
    expect(released).toBe(1);

    const spent: LoginGate = { tryAcquire: async () => ({ waitMs: 42_000, reason: 'budget' }) };
    const deferred = new StoreClient({ config: storeSchema.parse({ baseUrl: fixture.sim.url, username: 'demo', password: 'demo-password' }), logger: silentLogger(), loginGate: spent });
    const error = await deferred.sales.list().catch((e: unknown) => e);
    await deferred.close();
    expect(error).toBeInstanceOf(StoreLoginDeferredError);
    expect(error).toMatchObject({ retryAfterMs: 42_000, code: 'ERR_STORE_RATE_LIMITED' });
    expect((error as Error).message).toMatch(/login not sent: store.maxLoginsPerMinute \(6\) used up/);
    expect(fixture.sim.counters().logins).toBe(1);
  });

  it('keeps a login-budget wait longer than the pause on refused credentials: no login until the budget frees a slot', async () => {
    let clock = 1_000_000;
    fixture = await storeFixture();
    // The budget admits the first login, is spent when the 1 s pause ends (a slot in 30 s), then admits again.
    const answers: LoginAdmission[] = [{ permit: { release: () => undefined } }, { waitMs: 30_000, reason: 'budget' }];
    let asked = 0;
    const gate: LoginGate = {
      tryAcquire: async () => {
        asked += 1;
        return answers.shift() ?? { permit: { release: () => undefined } };
      },
    };
    const client = new StoreClient({
      config: storeSchema.parse({ baseUrl: fixture.sim.url, username: 'demo', password: 'wrong-password', loginBackoff: { baseDelayMs: 1000, maxDelayMs: 60_000 } }),
      logger: silentLogger(),
      loginGate: gate,
      now: () => clock,
    });
    try {
      expect(((await client.login().catch((e: unknown) => e)) as StoreLoginRefusedError).retryAfterMs).toBe(1000);
      clock += 1000;
      // The pause is over, but the budget is spent: 30 s to wait, not the 1 s pause.
      const spent = (await client.sales.list().catch((e: unknown) => e)) as StoreLoginRefusedError;
      expect(spent).toBeInstanceOf(StoreLoginRefusedError);
      expect(spent.retryAfterMs).toBe(30_000);
      // 10 s later the session is still paused by the budget's wait: no login asked for, none sent.
      clock += 10_000;
      const later = (await client.sales.list().catch((e: unknown) => e)) as StoreLoginRefusedError;
      expect(later, 'a login was tried before the budget freed a slot').toBeInstanceOf(StoreLoginRefusedError);
      expect(later.retryAfterMs, 'the wait left of the budget').toBe(20_000);
      expect(asked, 'the login gate was asked again during the budget wait').toBe(2);
      expect(fixture.sim.counters().failedLogins, 'logins the store saw').toBe(1);
    } finally {
      await client.close();
    }
  });

  it('does not pause for a login that failed on the network', async () => {
    fixture = await storeFixture();
    const client = fixture.newClient({ store: { baseUrl: 'http://127.0.0.1:9', retry: { attempts: 1 } } });
    const first = await client.login().catch((e: unknown) => e);
    expect(first).not.toBeInstanceOf(StoreLoginRefusedError);
    const second = await client.login().catch((e: unknown) => e);
    expect(second).not.toBeInstanceOf(StoreLoginRefusedError);
  });
});
