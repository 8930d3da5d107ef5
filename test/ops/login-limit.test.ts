import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

import type { Config } from '../../src/config/schema.js';
import { Metrics } from '../../src/metrics.js';
import { Readiness } from '../../src/ops/health.js';
import { buildHttpServer } from '../../src/ops/http-server.js';
import { LoginLimit } from '../../src/ops/login-limit.js';
import { logCollector } from './helpers.js';

const TOKEN = 'tok-login-limit-0123456789';
const WRONG = 'wrong-guess-';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function server(logs: ReturnType<typeof logCollector>): Promise<FastifyInstance> {
  app = await buildHttpServer({
    config: { http: { host: '127.0.0.1', port: 0 }, admin: { token: TOKEN, username: '', password: '' } } as Pick<Config, 'http' | 'admin'>,
    logger: logs.logger,
    metrics: new Metrics({ defaultMetrics: false }),
    readiness: new Readiness({ redis: { ping: async () => 'PONG' }, store: { login: async () => undefined } }),
    queues: [],
    control: { queueName: 'control', enqueue: async () => 'unused' },
  });
  return app;
}

/** A login form posted from `address`. */
function login(server: FastifyInstance, password: string, address: string) {
  return server.inject({
    method: 'POST',
    url: '/admin/login',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ password, next: '/admin/queues' }).toString(),
  });
}

const auditOf = (logs: ReturnType<typeof logCollector>, action: string) => logs.lines().filter((line) => line.audit === true && line.action === action);

describe('failed logins on /admin/login', () => {
  it('answers 10 wrong logins from one address with 401, then 429 with Retry-After; each failure is audited; another address still logs in', async () => {
    const logs = logCollector('info');
    const s = await server(logs);
    const statuses: number[] = [];
    for (let i = 1; i <= 10; i++) statuses.push((await login(s, `${WRONG}${i}`, '10.0.0.1')).statusCode);
    expect(statuses).toEqual(Array(10).fill(401));

    const refused = await login(s, `${WRONG}11`, '10.0.0.1');
    expect(refused.statusCode).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    // Whole seconds until the first failure is a minute old: at most 60, at least 1.
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(refused.body).toContain('Too many failed logins');
    // Past the limit even the right token is not tried: a guesser learns nothing from the answer.
    expect((await login(s, TOKEN, '10.0.0.1')).statusCode).toBe(429);

    const failed = auditOf(logs, 'admin:login:failed');
    expect(failed).toHaveLength(10);
    expect(failed.map((line) => line.failures)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(failed.every((line) => line.ip === '10.0.0.1' && line.level === 'warn')).toBe(true);
    // One line when the address is refused, not one per refusal.
    expect(auditOf(logs, 'admin:login:limited')).toEqual([expect.objectContaining({ ip: '10.0.0.1', retryAfterSeconds: retryAfter })]);
    expect(logs.text()).not.toContain(WRONG);
    expect(logs.text()).not.toContain(TOKEN);

    const other = await login(s, TOKEN, '10.0.0.2');
    expect(other.statusCode).toBe(303);
    expect(String(other.headers['set-cookie'])).toMatch(/^storesync_admin=/);
  });

  it('does not count a success: 9 failures, a success, then the 10th failure is still 401 and only the 11th attempt is refused', async () => {
    const logs = logCollector('info');
    const s = await server(logs);
    for (let i = 1; i <= 9; i++) expect((await login(s, `${WRONG}${i}`, '10.0.0.3')).statusCode).toBe(401);
    expect((await login(s, TOKEN, '10.0.0.3')).statusCode).toBe(303);
    expect((await login(s, `${WRONG}10`, '10.0.0.3')).statusCode).toBe(401);
    expect((await login(s, TOKEN, '10.0.0.3')).statusCode).toBe(429);
    expect(auditOf(logs, 'admin:login:failed')).toHaveLength(10);
  });

  it('counts wrong tokens in an Authorization header with the form: past 10, 429 for both', async () => {
    const logs = logCollector('info');
    const s = await server(logs);
    const api = (token: string) => s.inject({ method: 'GET', url: '/admin/queues/api/queues', remoteAddress: '10.0.0.4', headers: { authorization: `Bearer ${token}` } });
    for (let i = 1; i <= 5; i++) expect((await api(`${WRONG}${i}`)).statusCode).toBe(401);
    for (let i = 6; i <= 10; i++) expect((await login(s, `${WRONG}${i}`, '10.0.0.4')).statusCode).toBe(401);
    const refused = await api(TOKEN);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await login(s, TOKEN, '10.0.0.4')).statusCode).toBe(429);
    expect(auditOf(logs, 'admin:login:failed')).toHaveLength(10);
    // A request without credentials is no failed login: a browser sent to the login page is not counted.
    expect((await s.inject({ method: 'GET', url: '/admin/queues/api/queues', remoteAddress: '10.0.0.5' })).statusCode).toBe(401);
    expect(auditOf(logs, 'admin:login:failed')).toHaveLength(10);
  });
});

describe('LoginLimit', () => {
  it('refuses the 11th attempt within a minute of the first failure, with the seconds left, and allows it once that failure is a minute old', () => {
    let now = 1_000_000;
    const limit = new LoginLimit({ now: () => now });
    for (let i = 0; i < 10; i++) {
      expect(limit.check('a')).toEqual({ allowed: true });
      limit.fail('a');
      now += 1000;
    }
    // Failures at 0 … 9 s; now 10.5 s: the first leaves the window at 60 s, in 49.5 s, rounded up.
    now += 500;
    expect(limit.check('a')).toEqual({ allowed: false, retryAfterSeconds: 50, firstRefusal: true });
    expect(limit.check('a')).toEqual({ allowed: false, retryAfterSeconds: 50, firstRefusal: false });
    now = 1_000_000 + 59_999;
    expect(limit.check('a')).toEqual({ allowed: false, retryAfterSeconds: 1, firstRefusal: false });
    now = 1_000_000 + 60_000;
    expect(limit.check('a')).toEqual({ allowed: true });
    // Back at the limit: the next refusal is reported again.
    limit.fail('a');
    expect(limit.check('a')).toMatchObject({ allowed: false, firstRefusal: true });
  });

  it('remembers at most maxAddresses, forgetting the one that failed least recently', () => {
    const limit = new LoginLimit({ limit: 1, maxAddresses: 3, now: () => 0 });
    for (const address of ['a', 'b', 'c']) limit.fail(address);
    limit.fail('a');
    limit.fail('d');
    expect(limit.size).toBe(3);
    // b failed least recently (a failed again after it).
    expect(limit.check('b')).toEqual({ allowed: true });
    for (const address of ['a', 'c', 'd']) expect(limit.check(address)).toMatchObject({ allowed: false });
  });
});
