import { randomUUID } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { createRedis } from '../../src/queue/connection.js';
import { startRedisServer } from '../../src/queue/redis-server.js';
import { epochKey, RedisBoundMemory, redisIdentity } from '../../src/sync/redis-identity.js';
import { deleteKeys } from '../support/redis.js';

const prefix = `test-${randomUUID()}`;
const shared = createRedis('redis://127.0.0.1:6379/0');

afterAll(async () => {
  await deleteKeys(shared, prefix);
  shared.disconnect();
});

describe('redisIdentity', () => {
  it('is stable on one server, writes the epoch marker once, and changes when the marker is gone', async () => {
    const first = await redisIdentity(shared, prefix);
    expect(first).toMatch(/^[0-9a-f]{40}\/[0-9a-f]{24}$/);
    expect(await redisIdentity(shared, prefix)).toBe(first);
    expect(await shared.get(epochKey(prefix))).toBe(first.split('/')[1]);
    await shared.del(epochKey(prefix));
    const after = await redisIdentity(shared, prefix);
    expect(after.split('/')[0]).toBe(first.split('/')[0]);
    expect(after).not.toBe(first);
  });
});

describe('redisIdentity on a server of its own', () => {
  it('sends the script by its SHA after the first call (EVALSHA), and again in full to a restarted server that lost it', async () => {
    const server = await startRedisServer({ aof: true });
    const redis = createRedis(server.url);
    redis.on('error', () => undefined);
    /** Calls of `eval` and `evalsha` so far, from INFO commandstats (`cmdstat_eval:calls=3,...`). */
    const calls = async (): Promise<{ eval: number; evalsha: number }> => {
      const info = await redis.info('commandstats');
      const count = (name: string) => Number([...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].find((m) => m[1] === name)?.[2] ?? 0);
      return { eval: count('eval'), evalsha: count('evalsha') };
    };
    try {
      const runId = /run_id:([0-9a-f]+)/.exec(await redis.info('server'))?.[1];
      const first = await redisIdentity(redis, prefix);
      expect(first).toBe(`${runId}/${await redis.get(epochKey(prefix))}`);
      const before = await calls();
      for (let i = 0; i < 5; i += 1) expect(await redisIdentity(redis, prefix)).toBe(first);
      const after = await calls();
      expect(after.evalsha - before.evalsha).toBe(5);
      expect(after.eval - before.eval).toBe(0);

      await server.kill();
      await server.start();
      // The new server has no script cache: NOSCRIPT, then the text once; the marker came back from the AOF.
      const restarted = await redisIdentity(redis, prefix);
      expect(restarted.split('/')[1]).toBe(first.split('/')[1]);
      expect(restarted.split('/')[0]).not.toBe(first.split('/')[0]);
      expect(restarted.split('/')[0]).toBe(/run_id:([0-9a-f]+)/.exec(await redis.info('server'))?.[1]);
      expect((await calls()).eval).toBe(1);
    } finally {
      redis.disconnect();
      await server.destroy();
    }
  });
});

describe('RedisBoundMemory', () => {
  it('keeps its memory while Redis stays the same, drops it after a restart of the server (new run id) even when the marker survived', async () => {
    const server = await startRedisServer({ aof: true });
    const redis = createRedis(server.url);
    redis.on('error', () => undefined);
    try {
      const resets: string[] = [];
      const memory = new RedisBoundMemory(() => new Set<string>());
      (await memory.current(redis, prefix, (change) => resets.push(change.after))).add('row-1');
      expect(await memory.current(redis, prefix)).toEqual(new Set(['row-1']));
      const marker = await redis.get(epochKey(prefix));

      await server.kill();
      await server.start();
      // The marker came back from the append-only file; the server is a new one all the same.
      expect(await redis.get(epochKey(prefix))).toBe(marker);
      expect(await memory.current(redis, prefix, (change) => resets.push(change.after))).toEqual(new Set());
      expect(resets).toHaveLength(1);
      expect(memory.peek).toEqual(new Set());
    } finally {
      redis.disconnect();
      await server.destroy();
    }
  });

  it('drops its memory when the marker is gone from the same server (a flush)', async () => {
    const memory = new RedisBoundMemory(() => ({ rows: [] as string[] }));
    (await memory.current(shared, prefix)).rows.push('a');
    expect((await memory.current(shared, prefix)).rows).toEqual(['a']);
    await shared.del(epochKey(prefix));
    expect((await memory.current(shared, prefix)).rows).toEqual([]);
  });
});
