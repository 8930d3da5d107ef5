import { existsSync } from 'node:fs';

import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

import { redisAnswers, type RedisServer, RedisServerStartError, startRedisServer } from '../../src/queue/redis-server.js';

describe('private redis-server launcher', () => {
  const servers: RedisServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.destroy()));
  });

  it('starts on a spare port, survives a kill and a restart on the same port with AOF, and removes its folder', async () => {
    const server = await startRedisServer({ aof: true });
    servers.push(server);
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      await client.set('k', 'v');
    } finally {
      client.disconnect();
    }
    await server.kill();
    expect(await redisAnswers(server.url)).toBe(false);
    await server.start();
    const again = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await again.get('k')).toBe('v');
      expect(await again.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    } finally {
      again.disconnect();
    }
    expect(existsSync(`${server.dir}/redis.log`)).toBe(true);
    await server.destroy();
    expect(existsSync(server.dir)).toBe(false);
    expect(await redisAnswers(server.url)).toBe(false);
  });

  it('passes extra arguments, later ones winning', async () => {
    const server = await startRedisServer({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    servers.push(server);
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'allkeys-lru']);
    } finally {
      client.disconnect();
    }
  });

  it('says the program is not installed when it is not on the PATH', async () => {
    const error = await startRedisServer({ binary: 'no-such-redis-server' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RedisServerStartError);
    expect(error).toMatchObject({ reason: 'missing', message: 'no-such-redis-server is not installed (not found on the PATH)' });
  });

  it('says why the server exited, from its log', async () => {
    const error = await startRedisServer({ args: ['--maxmemory-policy', 'not-a-policy'] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RedisServerStartError);
    expect((error as RedisServerStartError).reason).toBe('exited');
    expect((error as Error).message).toMatch(/redis-server exited before answering on port \d+: .*not-a-policy/);
  });
});
