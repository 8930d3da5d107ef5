import { describe, expect, it } from 'vitest';

import { createSession, readCookie, SESSION_TTL_MS, sessionCookie, verifySession } from '../../src/ops/admin-session.js';

const admin = { token: 'tok-session-0123456789', username: '', password: '' };
const now = Date.parse('2026-04-30T08:00:00Z');

describe('admin session cookies', () => {
  it('gives back the user of a session it made, until it expires', () => {
    const value = createSession(admin, 'token', now);
    expect(verifySession(admin, value, now)).toBe('token');
    expect(verifySession(admin, value, now + SESSION_TTL_MS - 1000)).toBe('token');
    expect(verifySession(admin, value, now + SESSION_TTL_MS)).toBeUndefined();
  });

  it('keeps any user name intact, dots and non-ASCII letters included', () => {
    expect(verifySession(admin, createSession(admin, 'o.p. администратор', now), now)).toBe('o.p. администратор');
  });

  it('never carries the token, and two logins get different sessions', () => {
    const a = createSession(admin, 'token', now);
    const b = createSession(admin, 'token', now);
    expect(a).not.toBe(b);
    for (const value of [a, Buffer.from(a, 'utf8').toString('base64')]) expect(value).not.toContain(admin.token);
    expect(Buffer.from(a.split('.')[0] as string, 'base64url').toString()).toBe('token');
  });

  it('refuses a session whose user, expiry or MAC was changed, or that is malformed', () => {
    const [, expires, id, mac] = createSession(admin, 'token', now).split('.') as [string, string, string, string];
    const user = Buffer.from('someone-else').toString('base64url');
    expect(verifySession(admin, `${user}.${expires}.${id}.${mac}`, now)).toBeUndefined();
    expect(verifySession(admin, `${Buffer.from('token').toString('base64url')}.${Number(expires) + 86_400}.${id}.${mac}`, now)).toBeUndefined();
    expect(verifySession(admin, `${Buffer.from('token').toString('base64url')}.${expires}.${id}.${mac.slice(0, -2)}AA`, now)).toBeUndefined();
    for (const bad of ['', 'token', 'a.b.c', 'a.b.c.d.e', `..${id}.`]) expect(verifySession(admin, bad, now)).toBeUndefined();
  });

  it('ends every session when a credential changes, each of the three alone', () => {
    const basic = { token: 'tok-session-0123456789', username: 'ops', password: 'pw-session' };
    const value = createSession(basic, 'ops', now);
    expect(verifySession(basic, value, now)).toBe('ops');
    expect(verifySession({ ...basic, token: 'tok-rotated-0123456789' }, value, now), 'the token changed').toBeUndefined();
    expect(verifySession({ ...basic, username: 'ops2' }, value, now), 'the user name changed').toBeUndefined();
    expect(verifySession({ ...basic, password: 'pw-rotated' }, value, now), 'the password changed').toBeUndefined();
  });

  it('reads one cookie out of a Cookie header', () => {
    expect(readCookie('a=1; storesync_admin=x.y.z.w; b=2', 'storesync_admin')).toBe('x.y.z.w');
    expect(readCookie('xstoresync_admin=1', 'storesync_admin')).toBeUndefined();
    expect(readCookie(undefined, 'storesync_admin')).toBeUndefined();
  });

  it('sets the cookie HttpOnly and SameSite=Strict on the admin path, Secure over HTTPS, and removes it with Max-Age=0', () => {
    expect(sessionCookie('v', { path: '/admin', secure: false })).toBe(`storesync_admin=v; Path=/admin; Max-Age=${SESSION_TTL_MS / 1000}; HttpOnly; SameSite=Strict`);
    expect(sessionCookie('v', { path: '/admin', secure: true })).toMatch(/; Secure$/);
    expect(sessionCookie('', { path: '/admin', secure: false })).toContain('Max-Age=0;');
  });
});
