/**
 * Authentication of everything under /admin: a bearer token or basic credentials, compared in
 * constant time, or a browser's session cookie from the login page (`admin-login.ts`). Without any
 * credentials configured /admin is refused (403) rather than left open. A browser opening a page without
 * credentials is sent to the login page; other requests get 401 with a challenge naming the scheme
 * configured (Basic when a user name and password are, else Bearer, which no browser prompts for).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

import type { FastifyReply, FastifyRequest } from 'fastify';

import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { readCookie, SESSION_COOKIE, verifySession } from './admin-session.js';
import { type LoginLimit, recordFailedLogin, refuseIfLimited } from './login-limit.js';

/** The login page: outside the authenticated context, served by `admin-login.ts`. */
export const LOGIN_PATH = '/admin/login';

/** Who passed the check: the basic-auth user name, or `token` for the bearer token. */
export type AdminUser = string;

/** The outcome of checking one request's credentials. */
export type AdminAuthResult =
  | { ok: true; user: AdminUser }
  | { ok: false; status: 401 | 403; message: string };

/** Compares two strings in time independent of where they differ (lengths are hidden by hashing first). */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && expected.length > 0;
}

/** True when a token or basic credentials are configured; otherwise every /admin request is refused. */
export function adminEnabled(admin: Readonly<Config['admin']>): boolean {
  return admin.token !== '' || (admin.username !== '' && admin.password !== '');
}

const DISABLED: AdminAuthResult = {
  ok: false,
  status: 403,
  message: 'admin access is disabled: set admin.token (ADMIN_TOKEN) or admin.username and admin.password (ADMIN_USERNAME, ADMIN_PASSWORD)',
};

/**
 * Checks what the login page's form sent: the token (any user name, the session's user is then
 * `token`, as with the bearer token), or the basic user name and password.
 */
export function checkLogin(admin: Readonly<Config['admin']>, user: string, secret: string): AdminAuthResult {
  if (!adminEnabled(admin)) return DISABLED;
  // Every comparison runs, so that the time does not tell which one matched.
  const tokenOk = safeEqual(secret, admin.token);
  const userOk = safeEqual(user, admin.username);
  const passwordOk = safeEqual(secret, admin.password);
  if (tokenOk) return { ok: true, user: 'token' };
  if (userOk && passwordOk) return { ok: true, user };
  return { ok: false, status: 401, message: 'wrong credentials' };
}

/** Checks an `Authorization` header against the configured admin credentials. */
export function checkAdminAuth(admin: Readonly<Config['admin']>, authorization: string | undefined): AdminAuthResult {
  const basicConfigured = admin.username !== '' && admin.password !== '';
  if (!adminEnabled(admin)) return DISABLED;
  const denied: AdminAuthResult = { ok: false, status: 401, message: 'admin credentials required' };
  if (!authorization) return denied;
  const space = authorization.indexOf(' ');
  const scheme = (space < 0 ? authorization : authorization.slice(0, space)).toLowerCase();
  const value = space < 0 ? '' : authorization.slice(space + 1).trim();
  if (scheme === 'bearer' && admin.token !== '') {
    return safeEqual(value, admin.token) ? { ok: true, user: 'token' } : denied;
  }
  if (scheme === 'basic' && basicConfigured) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return denied;
    const user = decoded.slice(0, colon);
    // Both comparisons always run so that the time does not tell which half was wrong.
    const userOk = safeEqual(user, admin.username);
    const passwordOk = safeEqual(decoded.slice(colon + 1), admin.password);
    return userOk && passwordOk ? { ok: true, user } : denied;
  }
  return denied;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the admin hook once the request is authenticated. */
    adminUser?: AdminUser;
  }
}

/** A browser loading a page (not a script's request): it gets the login page rather than a 401. */
function wantsPage(request: FastifyRequest): boolean {
  return request.method === 'GET' && (request.headers.accept ?? '').includes('text/html');
}

/**
 * A fastify `onRequest` hook enforcing admin authentication (header or session cookie) on the routes of
 * its context. Wrong credentials in a header count against the address's failed logins (`loginLimit`,
 * shared with the login page); past the limit a request with a header is answered 429.
 */
export function adminAuthHook(admin: Readonly<Config['admin']>, logger: Logger, loginLimit: LoginLimit) {
  const basicConfigured = admin.username !== '' && admin.password !== '';
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.headers.authorization && adminEnabled(admin)) {
      const limited = refuseIfLimited(loginLimit, request, logger);
      if (limited !== undefined) {
        await reply.code(429).header('retry-after', String(limited)).send({ error: `too many failed logins from this address: try again in ${limited} s` });
        return;
      }
    }
    const result = checkAdminAuth(admin, request.headers.authorization);
    if (result.ok) {
      request.adminUser = result.user;
      return;
    }
    if (result.status === 401) {
      if (request.headers.authorization) {
        recordFailedLogin(loginLimit, request, logger);
      } else {
        const session = readCookie(request.headers.cookie, SESSION_COOKIE);
        const user = session === undefined ? undefined : verifySession(admin, session, Date.now());
        if (user !== undefined) {
          request.adminUser = user;
          return;
        }
        if (wantsPage(request)) {
          await reply.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(request.url)}`, 303);
          return;
        }
      }
      void reply.header('www-authenticate', basicConfigured ? 'Basic realm="storesync admin", charset="UTF-8"' : 'Bearer realm="storesync admin"');
    }
    await reply.code(result.status).send({ error: result.message });
  };
}
