/**
 * Browser sessions for /admin: after the login page accepted the token (or the basic credentials), the
 * browser holds a cookie `storesync_admin=<user>.<expiry>.<session id>.<mac>`, the MAC an HMAC-SHA256 of
 * the rest keyed by the configured credentials. The cookie carries no secret, needs no server-side state
 * (any storesync process with the same credentials accepts it), and every session ends when the token
 * or password changes. It is HttpOnly (no script reads it) and SameSite=Strict (no other site's page can
 * make the browser send it, so no cross-site request can act as the admin).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import type { Config } from '../config/schema.js';

/** The cookie's name. */
export const SESSION_COOKIE = 'storesync_admin';
/** How long a login lasts: a working day; then the login page asks again. */
export const SESSION_TTL_MS = 8 * 3600_000;

/** The key of the MACs: changes when any admin credential changes, so old cookies stop working. */
function sessionKey(admin: Readonly<Config['admin']>): Buffer {
  return createHash('sha256').update(`storesync-admin-session\0${admin.token}\0${admin.username}\0${admin.password}`).digest();
}

function mac(admin: Readonly<Config['admin']>, payload: string): Buffer {
  return createHmac('sha256', sessionKey(admin)).update(payload).digest();
}

/** A new session cookie's value for `user`, valid until `now + SESSION_TTL_MS`. */
export function createSession(admin: Readonly<Config['admin']>, user: string, now: number): string {
  const payload = `${Buffer.from(user, 'utf8').toString('base64url')}.${Math.floor((now + SESSION_TTL_MS) / 1000)}.${randomBytes(16).toString('base64url')}`;
  return `${payload}.${mac(admin, payload).toString('base64url')}`;
}

/** The user of a session cookie's value, or undefined when it is forged, altered, expired or malformed. */
export function verifySession(admin: Readonly<Config['admin']>, value: string, now: number): string | undefined {
  const parts = value.split('.');
  if (parts.length !== 4) return undefined;
  const [user, expires, id, given] = parts as [string, string, string, string];
  const expected = mac(admin, `${user}.${expires}.${id}`);
  const received = Buffer.from(given, 'base64url');
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return undefined;
  if (!/^\d+$/.test(expires) || Number(expires) * 1000 <= now) return undefined;
  return Buffer.from(user, 'base64url').toString('utf8');
}

/** The value of cookie `name` in a `Cookie` header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const equals = pair.indexOf('=');
    if (equals > 0 && pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim();
  }
  return undefined;
}

/** The `Set-Cookie` value of a session (or, with `value` empty, of its removal). */
export function sessionCookie(value: string, options: { path: string; secure: boolean }): string {
  const maxAge = value === '' ? 0 : Math.floor(SESSION_TTL_MS / 1000);
  return `${SESSION_COOKIE}=${value}; Path=${options.path}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${options.secure ? '; Secure' : ''}`;
}
