/**
 * The `redis` block (issue 23): one server (`url`), a Sentinel-watched primary (`sentinels` + `name`) or a Redis
 * Cluster (`cluster`); exactly one of the three. Kept apart from schema.ts, which takes the block as it is.
 */
import { z } from 'zod';

/** The server used when none of `url`, `sentinels` and `cluster` is set. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/0';

const node = z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535) }).strict();

/** `{tag}` inside a prefix: the part of a key Redis Cluster hashes to pick the slot. */
const HASH_TAG = /\{[^{}]+\}/;

/** The `redis` block's schema. */
export const redisSchema = z
  .object({
    /** redis://[user:pass@]host:port/db (rediss:// for TLS). Default when neither sentinels nor cluster is set. */
    url: z.string().regex(/^rediss?:\/\//, 'a redis://host:port/db URL').optional(),
    /** Sentinels watching the primary (`name` is its master group): storesync follows Sentinel's failovers. */
    sentinels: z.array(node).min(1, 'at least one sentinel').optional(),
    /** The master group name the sentinels monitor (`sentinel monitor <name> …`); required with `sentinels`. */
    name: z.string().min(1).optional(),
    /** Password of the sentinels themselves (their `requirepass`), when they have one. */
    sentinelPassword: z.string().optional(),
    /** Startup nodes of a Redis Cluster; the prefix must then hold a hash tag (`{storesync}`). */
    cluster: z.array(node).min(1, 'at least one startup node').optional(),
    /** ACL user of the data nodes, for `sentinels` and `cluster` (with `url`, put it in the URL). */
    username: z.string().optional(),
    /** Password of the data nodes, for `sentinels` and `cluster` (with `url`, put it in the URL). */
    password: z.string().optional(),
    /**
     * TLS to the data nodes (and to the sentinels): `true`, or `{ caFile, rejectUnauthorized }` to trust a private CA
     * (a PEM file). With `url`, rediss:// turns TLS on and an object here adds its CA. @defaultValue false
     */
    tls: z
      .union([z.boolean(), z.object({ caFile: z.string().min(1).optional(), rejectUnauthorized: z.boolean().default(true) }).strict()])
      .default(false),
    /**
     * Time a failover may take, from a lost master to writes on the new one: reconnects are spaced at most a sixth of
     * it apart (and at most 5 s). @defaultValue 30000
     */
    failoverTimeoutMs: z.number().int().min(1000).default(30_000),
    /** Key prefix of every key storesync writes; on Redis Cluster it must hold a hash tag: `{storesync}`. */
    prefix: z.string().min(1).default('storesync'),
  })
  .superRefine((redis, ctx) => {
    const modes = (['url', 'sentinels', 'cluster'] as const).filter((key) => redis[key] !== undefined);
    if (modes.length > 1) {
      for (const key of modes) {
        ctx.addIssue({ code: 'custom', path: [key], message: `exactly one of redis.url, redis.sentinels and redis.cluster (found ${modes.join(' and ')}): remove all but one` });
      }
    }
    if (redis.sentinels !== undefined && redis.name === undefined) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'the master group name the sentinels monitor (required with redis.sentinels)' });
    }
    if (redis.sentinels === undefined && (redis.name !== undefined || redis.sentinelPassword !== undefined)) {
      const key = redis.name !== undefined ? 'name' : 'sentinelPassword';
      ctx.addIssue({ code: 'custom', path: [key], message: `no value: redis.${key} applies only with redis.sentinels` });
    }
    if (redis.cluster !== undefined && !HASH_TAG.test(redis.prefix)) {
      ctx.addIssue({
        code: 'custom',
        path: ['prefix'],
        message: `a hash tag on Redis Cluster, so every key storesync and BullMQ write lives in one slot: use {storesync} or wrap your prefix in braces ({${redis.prefix}})`,
      });
    }
  })
  .transform((redis) => (redis.sentinels === undefined && redis.cluster === undefined && redis.url === undefined ? { ...redis, url: DEFAULT_REDIS_URL } : redis));

/** The parsed `redis` block: what the connection factory takes. */
export type RedisConfig = z.output<typeof redisSchema>;

/** Which of the three the configuration uses. */
export function redisMode(redis: Pick<RedisConfig, 'sentinels' | 'cluster'>): 'sentinel' | 'cluster' | 'single' {
  if (redis.sentinels !== undefined) return 'sentinel';
  if (redis.cluster !== undefined) return 'cluster';
  return 'single';
}

/** The passwords a connection uses (in the URL, the data nodes', the sentinels'), to register as secrets. */
export function redisSecrets(target: string | Pick<RedisConfig, 'url' | 'password' | 'sentinelPassword'>): string[] {
  const found: string[] = [];
  const url = typeof target === 'string' ? target : target.url;
  if (url !== undefined) {
    try {
      const password = decodeURIComponent(new URL(url).password);
      if (password !== '') found.push(password);
    } catch {
      // Not a URL the schema would accept; nothing to register.
    }
  }
  if (typeof target !== 'string') {
    if (target.password !== undefined) found.push(target.password);
    if (target.sentinelPassword !== undefined) found.push(target.sentinelPassword);
  }
  return found;
}
