/** Test helpers shared by the queue and inventory tests: key cleanup and a bounded poll. */
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

/** Polls `check` every 20 ms until it is truthy; fails after `timeoutMs` with `message`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, message = 'condition' }: { timeoutMs?: number; message?: string } = {},
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
