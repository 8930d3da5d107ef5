/** `GET /Api/Auth/?username&password`: issues a hash that expires after `hashTtlS`. */
import { randomBytes } from 'node:crypto';

import { HttpError } from '../http.js';
import type { Route } from '../router.js';
import type { SimContext } from './context.js';

/** The authentication route. */
export function authRoutes(ctx: SimContext): Route[] {
  return [
    {
      method: 'GET',
      template: '/Api/Auth',
      auth: false,
      handle({ query, now }) {
        const username = query.raw('username');
        const password = query.raw('password');
        if (username !== ctx.credentials.username || password !== ctx.credentials.password) {
          ctx.counters.bump('failedLogins');
          throw new HttpError(401, 'Invalid username or password', { status: '1', message: 'Invalid username or password' });
        }
        const hash = randomBytes(24).toString('hex');
        ctx.state.hashes.set(hash, now);
        ctx.counters.bump('logins');
        ctx.events.emit('login', { username });
        return { status: 200, body: { status: '0', message: 'OK', data: hash, site: ctx.site } };
      },
    },
  ];
}

/** True when `hash` was issued and has not expired; expired hashes are forgotten. */
export function hashValid(ctx: SimContext, hash: string | undefined, now: number): boolean {
  if (hash === undefined) return false;
  const issued = ctx.state.hashes.get(hash);
  if (issued === undefined) return false;
  if (now - issued >= ctx.faults.current.hashTtlS * 1000) {
    ctx.state.hashes.delete(hash);
    return false;
  }
  return true;
}
