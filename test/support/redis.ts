/** Keys under a test's or a benchmark's own Redis prefix: listed, deleted and dumped, always with SCAN. */
import type { Redis } from 'ioredis';

/** Every key under `prefix:` (SCAN, never KEYS, so a shared Redis stays responsive). */
export async function listKeys(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** Deletes every key under `prefix:`. */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await listKeys(redis, prefix);
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
}

/**
 * Key → value as text, whatever the type, of every key under `prefix:`: what the secret checks search (no password,
 * hash or token may be stored in Redis).
 */
export async function dumpPrefix(redis: Redis, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await listKeys(redis, prefix)) out.set(key, await dumpKey(redis, key));
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
      return JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES'));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}
