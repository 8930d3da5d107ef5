import { describe, expect, it } from 'vitest';

import { checkAdminAuth, safeEqual } from '../../src/ops/admin-auth.js';
import { dashboardAction } from '../../src/ops/audit.js';
import { basicAuth } from './helpers.js';

const admin = { token: 'tok-0123456789', username: 'ops', password: 'p:ss word' };

describe('admin authentication', () => {
  it('refuses with 403 when no credentials are configured', () => {
    expect(checkAdminAuth({ token: '', username: '', password: '' }, 'Bearer anything')).toMatchObject({ ok: false, status: 403 });
    // A user name without a password is not a credential.
    expect(checkAdminAuth({ token: '', username: 'ops', password: '' }, basicAuth('ops', ''))).toMatchObject({ ok: false, status: 403 });
  });

  it.each([
    ['no header', undefined],
    ['a wrong token', 'Bearer tok-wrong'],
    ['a token prefix', 'Bearer tok-0123'],
    ['a wrong password', basicAuth('ops', 'nope')],
    ['a wrong user', basicAuth('root', 'p:ss word')],
    ['another scheme', 'Digest tok-0123456789'],
    ['basic without a colon', `Basic ${Buffer.from('opsp:ss').toString('base64').slice(0, 3)}`],
  ])('answers 401 to %s', (_what, header) => {
    expect(checkAdminAuth(admin, header)).toMatchObject({ ok: false, status: 401 });
  });

  it('accepts the token and the basic credentials (a password may hold a colon), naming the user', () => {
    expect(checkAdminAuth(admin, 'Bearer tok-0123456789')).toEqual({ ok: true, user: 'token' });
    expect(checkAdminAuth(admin, 'bearer tok-0123456789')).toEqual({ ok: true, user: 'token' });
    expect(checkAdminAuth(admin, basicAuth('ops', 'p:ss word'))).toEqual({ ok: true, user: 'ops' });
  });

  it('compares equal strings as equal and never accepts an empty expected value', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(false);
  });
});

describe('dashboard audit action names', () => {
  it.each([
    ['/admin/queues/api/queues/:queueName/add', 'dashboard:add'],
    ['/admin/queues/api/queues/:queueName/:jobId/retry', 'dashboard:retry'],
    ['/admin/queues/api/queues/:queueName/retry/:queueStatus', 'dashboard:retry'],
    ['/admin/queues/api/queues/:queueName/clean/:queueStatus', 'dashboard:clean'],
    ['/admin/queues/api/queues/pause', 'dashboard:pause'],
    ['/admin/queues/api/queues/:queueName/job-schedulers/:schedulerId/remove', 'dashboard:job-schedulers/remove'],
  ])('names %s %s', (url, action) => {
    expect(dashboardAction(url)).toBe(action);
  });
});
