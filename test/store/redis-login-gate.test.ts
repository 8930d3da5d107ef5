import { afterAll, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import type { LoginAdmission, LoginPermit } from '../../src/store/login-gate.js';
import { RedisLoginGate } from '../../src/store/redis-login-gate.js';
import { testPrefix } from '../ops/helpers.js';
import { deleteKeys,dumpPrefix } from '../support/redis.js';

const redis = createRedis('redis://127.0.0.1:6379/0');
const prefixes: string[] = [];

afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(redis, prefix);
  redis.disconnect();
});

/** Two gates (two processes) on one prefix. */
function gates(maxPerMinute: number): [RedisLoginGate, RedisLoginGate, string] {
  const prefix = testPrefix();
  prefixes.push(prefix);
  const options = { prefix, maxPerMinute, holdMs: 40_000 };
  return [new RedisLoginGate(redis, options), new RedisLoginGate(redis, options), prefix];
}

function permitOf(admission: LoginAdmission): LoginPermit {
  if (!('permit' in admission)) throw new Error(`expected a permit, got a wait of ${admission.waitMs} ms (${admission.reason})`);
  return admission.permit;
}

describe('RedisLoginGate', () => {
  it('admits one login at a time across processes: the other waits briefly until the first is answered', async () => {
    const [a, b] = gates(6);
    const first = permitOf(await a.tryAcquire());
    const busy = await b.tryAcquire();
    expect(busy).toMatchObject({ reason: 'busy' });
    expect((busy as { waitMs: number }).waitMs).toBeLessThanOrEqual(100);
    first.release(false);
    // The release is not awaited by the login; the next admission sees it once Redis ran it.
    await redis.ping();
    permitOf(await b.tryAcquire()).release(false);
  });

  it('admits at most maxPerMinute logins in a minute across processes, then says how long until a slot frees up', async () => {
    const [a, b] = gates(3);
    for (const gate of [a, b, a]) {
      permitOf(await gate.tryAcquire()).release(false);
      await redis.ping();
    }
    const spent = await b.tryAcquire();
    expect(spent).toMatchObject({ reason: 'budget' });
    expect((spent as { waitMs: number }).waitMs).toBeGreaterThan(50_000);
    expect((spent as { waitMs: number }).waitMs).toBeLessThanOrEqual(60_001);
    expect(await a.tryAcquire()).toMatchObject({ reason: 'budget' });
  });

  it('gives an accepted login back to the budget: processes restarting together never wait for it', async () => {
    const [a, b] = gates(2);
    for (let i = 0; i < 5; i += 1) {
      permitOf(await (i % 2 === 0 ? a : b).tryAcquire()).release(true);
      await redis.ping();
    }
    permitOf(await a.tryAcquire()).release(false);
    await redis.ping();
    permitOf(await b.tryAcquire()).release(false);
    await redis.ping();
    expect(await a.tryAcquire()).toMatchObject({ reason: 'budget' });
  });

  it('keeps only owner ids and times in Redis, with expiries', async () => {
    const [a, , prefix] = gates(6);
    const permit = permitOf(await a.tryAcquire());
    const keys = await dumpPrefix(redis, prefix);
    expect([...keys.keys()].sort()).toEqual([`${prefix}:store-login:lock`, `${prefix}:store-login:window`]);
    for (const key of keys.keys()) expect(await redis.pttl(key)).toBeGreaterThan(0);
    for (const value of keys.values()) expect(value).toMatch(/^[\w\-:.,\s"[\]{}]*$/);
    permit.release(false);
  });
});
