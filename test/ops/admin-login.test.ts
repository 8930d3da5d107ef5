import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Config } from '../../src/config/schema.js';
import { Metrics } from '../../src/metrics.js';
import { createSession, SESSION_COOKIE, SESSION_TTL_MS } from '../../src/ops/admin-session.js';
import { Readiness } from '../../src/ops/health.js';
import { buildHttpServer } from '../../src/ops/http-server.js';
import { logCollector } from './helpers.js';

const TOKEN = 'tok-login-page-0123456789';
const PASSWORD = 'pw-login-page-secret';

/** The routes of the HTTP server with these credentials; no queue, nothing listening. */
async function server(admin: Config['admin'], logs = logCollector()): Promise<FastifyInstance> {
  return buildHttpServer({
    config: { http: { host: '127.0.0.1', port: 0 }, admin } as Pick<Config, 'http' | 'admin'>,
    logger: logs.logger,
    metrics: new Metrics({ defaultMetrics: false }),
    readiness: new Readiness({ redis: { ping: async () => 'PONG' }, store: { login: async () => undefined } }),
    queues: [],
    control: { queueName: 'control', enqueue: async () => 'unused' },
  });
}

const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString(),
});
const page = { accept: 'text/html,application/xhtml+xml' };

describe('admin login page with only admin.token', () => {
  const logs = logCollector();
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await server({ token: TOKEN, username: '', password: '' }, logs);
  });
  afterAll(async () => {
    await app.close();
  });

  it('sends a browser opening a page without credentials to the login page, and keeps 401 with a Bearer challenge for scripts', async () => {
    const opened = await app.inject({ method: 'GET', url: '/admin/queues/queue/control?status=failed', headers: page });
    expect(opened.statusCode).toBe(303);
    expect(opened.headers.location).toBe(`/admin/login?next=${encodeURIComponent('/admin/queues/queue/control?status=failed')}`);
    const script = await app.inject({ method: 'GET', url: '/admin/queues/api/queues' });
    expect(script.statusCode).toBe(401);
    expect(script.headers['www-authenticate']).toMatch(/^Bearer realm=/);
  });

  it('shows a form asking only for the token, with no script, no outside resource and a policy allowing none', async () => {
    const login = await app.inject({ method: 'GET', url: '/admin/login?next=/admin/queues', headers: page });
    expect(login.statusCode).toBe(200);
    expect(login.headers['content-type']).toContain('text/html');
    expect(login.headers['content-security-policy']).toContain("default-src 'none'");
    expect(login.body).toContain('name="password"');
    expect(login.body).not.toContain('name="user"');
    expect(login.body).not.toMatch(/<script|https?:\/\//);
  });

  it('logs in with the token: a session cookie, HttpOnly and SameSite=Strict, that opens /admin for the user "token"', async () => {
    const answer = await app.inject({ method: 'POST', url: '/admin/login', ...form({ user: '', password: TOKEN, next: '/admin/queues/queue/control' }) });
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/admin/queues/queue/control');
    const cookie = String(answer.headers['set-cookie']);
    expect(cookie).toMatch(/^storesync_admin=[^;]+; Path=\/admin; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toContain(TOKEN);
    const session = cookie.split(';')[0] as string;

    const resync = await app.inject({ method: 'POST', url: '/admin/resync/inventory', headers: { cookie: session }, payload: { dryRun: true } });
    expect(resync.statusCode).toBe(202);
    expect(logs.lines()).toContainEqual(expect.objectContaining({ audit: true, action: 'resync:inventory', user: 'token' }));
    const again = await app.inject({ method: 'GET', url: '/admin/login', headers: { ...page, cookie: session } });
    expect(again.body).toContain('Logged in as <strong>token</strong>');
  });

  it('serves the dashboard page with no link to another host and a policy letting the browser load only from storesync', async () => {
    const login = await app.inject({ method: 'POST', url: '/admin/login', ...form({ password: TOKEN }) });
    const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
    const dashboard = await app.inject({ method: 'GET', url: '/admin/queues', headers: { ...page, cookie } });
    expect(dashboard.statusCode).toBe(200);
    expect(dashboard.body).toContain('static/js/');
    expect(dashboard.body).not.toMatch(/(href|src)=["']?(https?:)?\/\//);
    expect(dashboard.headers['content-security-policy']).toContain("default-src 'self'");
    expect(Number(dashboard.headers['content-length'])).toBe(Buffer.byteLength(dashboard.body));
  });

  it('answers a wrong token with the form again (401), logs the failure without the value, and sets no cookie', async () => {
    const answer = await app.inject({ method: 'POST', url: '/admin/login', ...form({ password: `${TOKEN}x`, next: '/admin/queues' }) });
    expect(answer.statusCode).toBe(401);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.body).toContain('Wrong token or password.');
    expect(answer.body).toContain('value="/admin/queues"');
    expect(logs.lines()).toContainEqual(expect.objectContaining({ audit: true, msg: 'audit: admin:login:failed', url: '/admin/login' }));
    expect(logs.text()).not.toContain(TOKEN);
  });

  it.each([
    ['another host', 'https://evil.example/admin/queues'],
    ['a protocol-relative URL', '//evil.example/admin'],
    ['a path outside /admin', '/metrics'],
    ['a backslash trick', '/admin/\\evil.example'],
    ['the login page itself', '/admin/login'],
  ])('sends a login whose next is %s to the dashboard instead', async (_what, next) => {
    const answer = await app.inject({ method: 'POST', url: '/admin/login', ...form({ password: TOKEN, next }) });
    expect(answer.headers.location).toBe('/admin/queues');
  });

  it('refuses a forged or altered cookie like no credentials', async () => {
    const answer = await app.inject({ method: 'POST', url: '/admin/login', ...form({ password: TOKEN }) });
    const [name, value] = (String(answer.headers['set-cookie']).split(';')[0] as string).split('=') as [string, string];
    const [, expires, id, mac] = value.split('.') as [string, string, string, string];
    for (const cookie of [`${name}=${Buffer.from('admin').toString('base64url')}.${expires}.${id}.${mac}`, `${name}=${value}x`, `${name}=${TOKEN}`]) {
      const denied = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { cookie } });
      expect(denied.statusCode).toBe(401);
    }
  });

  it('refuses an expired session cookie on /admin and asks the browser to log in again', async () => {
    // A cookie with a valid MAC whose expiry passed a second ago (made as the login made it, a day ago).
    const expired = `${SESSION_COOKIE}=${createSession({ token: TOKEN, username: '', password: '' }, 'token', Date.now() - SESSION_TTL_MS - 1000)}`;
    const script = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { cookie: expired } });
    expect(script.statusCode, 'an expired session opens /admin for a script').toBe(401);
    const browser = await app.inject({ method: 'GET', url: '/admin/queues', headers: { ...page, cookie: expired } });
    expect(browser.statusCode, 'an expired session opens the dashboard').toBe(303);
    expect(browser.headers.location).toBe(`/admin/login?next=${encodeURIComponent('/admin/queues')}`);
    const resync = await app.inject({ method: 'POST', url: '/admin/resync/inventory', headers: { cookie: expired }, payload: { dryRun: true } });
    expect(resync.statusCode, 'an expired session queues a resync').toBe(401);
    const login = await app.inject({ method: 'GET', url: '/admin/login', headers: { ...page, cookie: expired } });
    expect(login.body).not.toContain('Logged in as');
  });

  it('logs out: the cookie is removed and the browser goes back to the login page', async () => {
    const answer = await app.inject({ method: 'POST', url: '/admin/logout' });
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/admin/login');
    expect(String(answer.headers['set-cookie'])).toMatch(/^storesync_admin=; Path=\/admin; Max-Age=0;/);
  });
});

describe('admin login page with a user name and password', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await server({ token: '', username: 'ops', password: PASSWORD });
  });
  afterAll(async () => {
    await app.close();
  });

  it('asks for the user name too, and logs in with both, the session naming the user', async () => {
    expect((await app.inject({ method: 'GET', url: '/admin/login', headers: page })).body).toContain('name="user"');
    expect((await app.inject({ method: 'POST', url: '/admin/login', ...form({ user: 'root', password: PASSWORD }) })).statusCode).toBe(401);
    const answer = await app.inject({ method: 'POST', url: '/admin/login', ...form({ user: 'ops', password: PASSWORD }) });
    expect(answer.statusCode).toBe(303);
    const cookie = (String(answer.headers['set-cookie']).split(';')[0] as string);
    expect((await app.inject({ method: 'GET', url: '/admin/login', headers: { ...page, cookie } })).body).toContain('Logged in as <strong>ops</strong>');
  });

  it('keeps the Basic challenge for scripts', async () => {
    const answer = await app.inject({ method: 'GET', url: '/admin/queues/api/queues' });
    expect(answer.headers['www-authenticate']).toMatch(/^Basic realm=/);
  });
});

describe('admin login page without admin credentials', () => {
  it('does not exist: /admin/login is refused like the rest of /admin', async () => {
    const app = await server({ token: '', username: '', password: '' });
    try {
      expect((await app.inject({ method: 'GET', url: '/admin/login', headers: page })).statusCode).toBe(403);
      expect((await app.inject({ method: 'POST', url: '/admin/login', ...form({ password: '' }) })).statusCode).toBe(403);
    } finally {
      await app.close();
    }
  });
});
