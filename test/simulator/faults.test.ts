import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { call, session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

describe('simulator fault injection', () => {
  // A frozen clock keeps the rate-limit window still, so counts do not depend on timing.
  const clock = Date.UTC(2024, 0, 1, 12);
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: 3, sales: 2, users: 1, now: () => clock });
    s = await session(sim.url);
  });
  afterEach(() => {
    sim.faults.set({ failRate: 0, rate429: 0, rateLimit: 0, latencyMs: 0, jitterMs: 0 });
  });
  afterAll(() => sim.close());

  it('answers 500 to every API request, logins included, when failRate is 1', async () => {
    sim.faults.set({ failRate: 1 });
    const before = sim.counters().faults.serverError;
    expect((await s.call('GET', '/Api/Inventory/Get')).status).toBe(500);
    expect((await s.call('PUT', '/Api/Inventory', { query: { mode: 'default' }, body: { InternalId: 0, Code: 'SKU-000001', Stock: 1 } })).status).toBe(500);
    expect((await call(sim.url, 'GET', '/Api/Auth/', { query: { username: 'demo', password: 'demo-password' } })).status).toBe(500);
    expect(sim.counters().faults.serverError).toBe(before + 3);
    expect(sim.writes).toHaveLength(0);
  });

  it('answers 429 with Retry-After: 1 when rate429 is 1', async () => {
    sim.faults.set({ rate429: 1 });
    const res = await s.call('GET', '/Api/Sale/');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect(sim.counters().faults.tooManyRequests).toBeGreaterThanOrEqual(1);
  });

  it('answers 429 with Retry-After to requests beyond rateLimit per second', async () => {
    sim.faults.set({ rateLimit: 3 });
    const statuses: number[] = [];
    const retryAfter: unknown[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await s.call('GET', '/Api/Inventory/Get', { query: { code: 'SKU-000001' } });
      statuses.push(res.status);
      if (res.status === 429) retryAfter.push(res.headers['retry-after']);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(retryAfter).toEqual(['1', '1']);
    expect(sim.counters().faults.rateLimited).toBe(2);
  });

  it('delays API responses by at least latencyMs', async () => {
    sim.faults.set({ latencyMs: 150 });
    const started = performance.now();
    expect((await s.call('GET', '/Api/Inventory/Get', { query: { code: 'SKU-000001' } })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('never applies faults to the control API', async () => {
    sim.faults.set({ failRate: 1, latencyMs: 60_000 });
    expect((await call(sim.url, 'GET', '/__control/counters')).status).toBe(200);
    expect((await call(sim.url, 'GET', '/__control/faults')).body).toMatchObject({ failRate: 1, latencyMs: 60_000 });
  });

  it('changes faults through POST /__control/faults and refuses unknown keys or bad values with 400', async () => {
    const res = await call(sim.url, 'POST', '/__control/faults', { body: { rate429: 1 } });
    expect(res.status).toBe(200);
    expect(sim.faults.current.rate429).toBe(1);
    expect((await s.call('GET', '/Api/Sale/')).status).toBe(429);
    expect((await call(sim.url, 'POST', '/__control/faults', { body: { failRate: 2 } })).status).toBe(400);
    expect((await call(sim.url, 'POST', '/__control/faults', { body: { failrate: 0.5 } })).status).toBe(400);
  });

  it('takes faults from the start options', async () => {
    const other = await startSimulator({ port: 0, items: 1, sales: 0, users: 0, failRate: 1, hashTtlS: 42 });
    try {
      expect(other.faults.current).toMatchObject({ failRate: 1, hashTtlS: 42 });
      expect((await call(other.url, 'GET', '/Api/Auth/', { query: { username: 'demo', password: 'demo-password' } })).status).toBe(500);
    } finally {
      await other.close();
    }
  });

  it('ends requests still waiting out their latency when the simulator closes', async () => {
    const other = await startSimulator({ port: 0, items: 1, sales: 0, users: 0, latencyMs: 60_000 });
    const pending = call(other.url, 'GET', '/Api/Auth/', { query: { username: 'demo', password: 'demo-password' } });
    const settled = pending.then(
      () => 'answered',
      () => 'dropped',
    );
    await waitFor(() => other.counters().total > 0, { message: 'the request to reach the simulator' });
    await other.close();
    expect(await settled).toBe('dropped');
  });
});
