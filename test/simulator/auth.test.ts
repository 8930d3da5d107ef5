import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, session } from './http.js';

describe('simulator authentication', () => {
  let clock = Date.UTC(2024, 4, 1, 12);
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: 5, sales: 2, users: 2, password: 'p&ss+w#rd', now: () => clock, hashTtlS: 60 });
  });
  afterAll(() => sim.close());

  it('issues a hash with status "0" and site for the right credentials', async () => {
    const res = await call<Record<string, unknown>>(sim.url, 'GET', '/Api/Auth/', { query: { username: 'demo', password: 'p&ss+w#rd' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: '0', message: 'OK', site: 1 });
    expect(res.body.data).toMatch(/^[0-9a-f]{48}$/);
  });

  it('answers 401 to a wrong password and counts the failed login', async () => {
    const before = sim.counters().failedLogins;
    const res = await call(sim.url, 'GET', '/Api/Auth/', { query: { username: 'demo', password: 'wrong' } });
    expect(res.status).toBe(401);
    expect(sim.counters().failedLogins).toBe(before + 1);
  });

  it('refuses a password whose + and & were not URL-encoded', async () => {
    const res = await call(sim.url, 'GET', '/Api/Auth/?username=demo&password=p&ss+w#rd');
    expect(res.status).toBe(401);
  });

  it('answers 401 to a request without a hash or with an unknown hash', async () => {
    expect((await call(sim.url, 'GET', '/Api/Inventory/Get')).status).toBe(401);
    expect((await call(sim.url, 'GET', '/Api/Inventory/Get', { query: { hash: 'nope' } })).status).toBe(401);
    expect(sim.counters().unauthorized).toBeGreaterThanOrEqual(2);
  });

  it('accepts a hash until hashTtlS has passed and answers 401 after', async () => {
    const s = await session(sim.url, 'demo', 'p&ss+w#rd');
    clock += 59_000;
    expect((await s.call('GET', '/Api/Inventory/Get')).status).toBe(200);
    clock += 1_000;
    expect((await s.call('GET', '/Api/Inventory/Get')).status).toBe(401);
  });

  it('applies a hashTtlS changed at run time to hashes already issued', async () => {
    const s = await session(sim.url, 'demo', 'p&ss+w#rd');
    clock += 10_000;
    sim.faults.set({ hashTtlS: 5 });
    try {
      expect((await s.call('GET', '/Api/Sale/')).status).toBe(401);
    } finally {
      sim.faults.set({ hashTtlS: 60 });
    }
  });

  it('makes every hash invalid when the control API expires them', async () => {
    const a = await session(sim.url, 'demo', 'p&ss+w#rd');
    const b = await session(sim.url, 'demo', 'p&ss+w#rd');
    const res = await call<{ expired: number }>(sim.url, 'POST', '/__control/expire-hashes');
    expect(res.status).toBe(200);
    expect(res.body.expired).toBeGreaterThanOrEqual(2);
    expect((await a.call('GET', '/Api/Sale/')).status).toBe(401);
    expect((await b.call('GET', '/Api/Sale/')).status).toBe(401);
    const again = await session(sim.url, 'demo', 'p&ss+w#rd');
    expect((await again.call('GET', '/Api/Sale/')).status).toBe(200);
  });

  it('matches paths whatever their letter case and trailing slash', async () => {
    const s = await session(sim.url, 'demo', 'p&ss+w#rd');
    for (const path of ['/Api/Inventory/Get', '/api/inventory/get/', '/API/INVENTORY', '/Api/inventory', '/api/sale', '/Api/Sale/', '/Api/User/1', '/user/1', '/api/client/get']) {
      expect((await s.call('GET', path)).status, path).toBe(200);
    }
    expect((await call(sim.url, 'GET', '/api/auth', { query: { username: 'demo', password: 'p&ss+w#rd' } })).status).toBe(200);
  });

  it('answers 404 to an unknown path and 405 to a known path with another method', async () => {
    const s = await session(sim.url, 'demo', 'p&ss+w#rd');
    expect((await s.call('GET', '/Api/Nothing')).status).toBe(404);
    const res = await s.call('DELETE', '/Api/Inventory');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('PUT');
  });
});
