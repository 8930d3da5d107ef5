/**
 * Every key under a prefix with its value as text, whatever the type: what the secret checks search
 * (no password, hash or token may be stored in Redis).
 */
import type { Redis } from 'ioredis';

/** Key → value text of every key matching `${prefix}*`. */
export async function dumpPrefix(redis: Redis, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) out.set(key, await dumpKey(redis, key));
  } while (cursor !== '0');
  return out;
}

async function dumpKey(redis: Redis, key: string): Promise<string> {
  switch (await redis.type(key)) {
    case 'string':
      return (await redis.get(key)) ?? '';
    case 'hash':
      return JSON.stringify(await redis.hgetall(key));
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify(await redis.smembers(key));
    case 'zset':
      return JSON.stringify(await redis.zrange(key, 0, -1));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}
