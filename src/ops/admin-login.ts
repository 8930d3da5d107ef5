/**
 * The login page of /admin for browsers: `GET /admin/login` shows a form (the admin token, or the basic
 * user name and password), `POST /admin/login` checks it and sets the session cookie (`admin-session.ts`)
 * before sending the browser back where it was going (failures limited per address: login-limit.ts),
 * `POST /admin/logout` removes the cookie. A plain
 * HTML form with no script, no outside resource, and a Content-Security-Policy that allows none.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { checkLogin, LOGIN_PATH } from './admin-auth.js';
import { createSession, readCookie, SESSION_COOKIE, sessionCookie, verifySession } from './admin-session.js';
import { type LoginLimit, recordFailedLogin, refuseIfLimited } from './login-limit.js';

/** Where the logout form posts. */
export const LOGOUT_PATH = '/admin/logout';

/** What the login page of the browser shows: no script, no resource from anywhere, not framed by other sites. */
const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Options of `registerAdminLogin`. */
export interface AdminLoginOptions {
  admin: Readonly<Config['admin']>;
  logger: Logger;
  /** Where a login goes when the page was opened directly. */
  home: string;
  /** The session cookie's path: the admin prefix. */
  cookiePath: string;
  /** Failed logins per client address, shared with the `Authorization` header check. */
  loginLimit: LoginLimit;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** `next` when it is a page of this server under the admin prefix (never another host: no open redirect). */
function safeNext(next: unknown, options: AdminLoginOptions): string {
  if (typeof next !== 'string' || !next.startsWith(`${options.cookiePath}/`) || next.startsWith(LOGIN_PATH) || /[\\\s]/.test(next)) return options.home;
  return next;
}

function page(body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>storesync admin</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1f2937;display:flex;justify-content:center;padding-top:12vh;margin:0}
main{background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002;padding:2rem;width:22rem}
h1{font-size:1.25rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-size:.9rem}
input{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #cbd5e1;border-radius:4px;font-size:1rem}
button{margin-top:1.25rem;width:100%;padding:.6rem;border:0;border-radius:4px;background:#2563eb;color:#fff;font-size:1rem;cursor:pointer}
p.error{color:#b91c1c}p.hint{color:#6b7280;font-size:.85rem}
</style></head><body><main><h1>storesync admin</h1>
${body}
</main></body></html>
`;
}

function loginForm(next: string, options: { user?: string; error?: string; basic: boolean }): string {
  const userField = options.basic
    ? `<label for="user">User name <span class="hint">(only with a password; leave empty with the token)</span></label>
<input id="user" name="user" autocomplete="username" value="${escapeHtml(options.user ?? '')}">`
    : '';
  return page(`${options.error ? `<p class="error" role="alert">${escapeHtml(options.error)}</p>` : ''}
<form method="post" action="${LOGIN_PATH}">
<input type="hidden" name="next" value="${escapeHtml(next)}">
${userField}
<label for="password">${options.basic ? 'Admin token or password' : 'Admin token'}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>`);
}

function loggedIn(user: string, next: string): string {
  return page(`<p>Logged in as <strong>${escapeHtml(user)}</strong>. <a href="${escapeHtml(next)}">Open the dashboard</a>.</p>
<form method="post" action="${LOGOUT_PATH}"><button type="submit">Log out</button></form>`);
}

/** Registers the login and logout routes in `app` (outside the authenticated context; only when admin credentials are configured). */
export async function registerAdminLogin(app: FastifyInstance, options: AdminLoginOptions): Promise<void> {
  const basic = options.admin.username !== '' && options.admin.password !== '';
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).header('content-security-policy', PAGE_POLICY).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
  const cookie = (request: FastifyRequest, value: string) => sessionCookie(value, { path: options.cookiePath, secure: request.protocol === 'https' });

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    scope.get(LOGIN_PATH, async (request, reply) => {
      const next = safeNext((request.query as { next?: unknown }).next, options);
      const session = readCookie(request.headers.cookie, SESSION_COOKIE);
      const user = session === undefined ? undefined : verifySession(options.admin, session, Date.now());
      return html(reply, 200, user === undefined ? loginForm(next, { basic }) : loggedIn(user, next));
    });

    scope.post(LOGIN_PATH, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const text = (key: string): string => (typeof body[key] === 'string' ? (body[key] as string) : '');
      const next = safeNext(body.next, options);
      const limited = refuseIfLimited(options.loginLimit, request, options.logger);
      if (limited !== undefined) {
        void reply.header('retry-after', String(limited));
        return html(reply, 429, loginForm(next, { user: text('user'), error: `Too many failed logins from this address: try again in ${limited} s.`, basic }));
      }
      const result = checkLogin(options.admin, text('user'), text('password'));
      if (!result.ok) {
        recordFailedLogin(options.loginLimit, request, options.logger);
        return html(reply, 401, loginForm(next, { user: text('user'), error: 'Wrong token or password.', basic }));
      }
      void reply.header('set-cookie', cookie(request, createSession(options.admin, result.user, Date.now())));
      return reply.redirect(next, 303);
    });

    scope.post(LOGOUT_PATH, async (request, reply) => {
      void reply.header('set-cookie', cookie(request, ''));
      return reply.redirect(LOGIN_PATH, 303);
    });
  });
}
