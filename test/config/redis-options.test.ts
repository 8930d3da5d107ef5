/** src/config/redis-options.ts: one server, Sentinel or Cluster (exactly one), the hash tag on Cluster, secrets kept out. */
import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { describeRedis, redisSecrets } from '../../src/queue/connection.js';
import { redactText } from '../../src/secrets.js';

function problemsOf(overrides: Record<string, unknown>, env: Record<string, string> = {}): readonly string[] {
  try {
    loadConfig({ env, overrides });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const sentinels = [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26379 }];
const cluster = [{ host: '10.0.0.1', port: 7000 }];

describe('redis config', () => {
  it('defaults to one local server, with failoverTimeoutMs 30000 and no TLS', () => {
    const { redis } = loadConfig({ env: {} });
    expect(redis).toMatchObject({ url: 'redis://127.0.0.1:6379/0', failoverTimeoutMs: 30_000, tls: false, prefix: 'storesync' });
    expect(redis.sentinels).toBeUndefined();
    expect(redis.cluster).toBeUndefined();
  });

  it('takes sentinels with the master group name and passwords, and no url', () => {
    const { redis } = loadConfig({ env: {}, overrides: { redis: { sentinels, name: 'main', sentinelPassword: 's3ntinel-pw', password: 'data-pw-1', tls: true } } });
    expect(redis).toMatchObject({ sentinels, name: 'main', tls: true });
    expect(redis.url).toBeUndefined();
    expect(describeRedis(redis)).toBe('sentinel main@10.0.0.1:26379,10.0.0.2:26379');
    expect(redisSecrets(redis).sort()).toEqual(['data-pw-1', 's3ntinel-pw']);
    // Registered as secrets by loadConfig itself: redacted from any log line or error of any command.
    expect(redactText('auth data-pw-1 / s3ntinel-pw')).toBe('auth [redacted] / [redacted]');
  });

  it('refuses two of url, sentinels and cluster at once, naming each (the CLI exits 78 on a ConfigError)', () => {
    const problems = problemsOf({ redis: { url: 'redis://10.0.0.9:6379/0', sentinels, name: 'main' } });
    expect(problems).toContainEqual(expect.stringMatching(/^redis\.url: .*exactly one of redis\.url, redis\.sentinels and redis\.cluster \(found url and sentinels\)/));
    expect(problems).toContainEqual(expect.stringMatching(/^redis\.sentinels: .*exactly one of/));
    // REDIS_URL counts as a url too.
    expect(problemsOf({ redis: { cluster, prefix: '{storesync}' } }, { REDIS_URL: 'redis://10.0.0.9:6379/0' })).toContainEqual(expect.stringMatching(/found url and cluster/));
  });

  it('requires the master group name with sentinels, and refuses it without them', () => {
    expect(problemsOf({ redis: { sentinels } })).toContainEqual(expect.stringMatching(/^redis\.name: .*the master group name the sentinels monitor/));
    expect(problemsOf({ redis: { name: 'main' } })).toContainEqual(expect.stringMatching(/^redis\.name: .*applies only with redis\.sentinels/));
  });

  it('refuses a prefix without a hash tag on Cluster, naming the fix', () => {
    const problems = problemsOf({ redis: { cluster, prefix: 'shop1' } });
    expect(problems).toContainEqual(expect.stringMatching(/^redis\.prefix: "shop1" — expected a hash tag on Redis Cluster.*use \{storesync\} or wrap your prefix in braces \(\{shop1\}\)/));
    expect(loadConfig({ env: {}, overrides: { redis: { cluster, prefix: '{shop1}' } } }).redis.prefix).toBe('{shop1}');
    expect(loadConfig({ env: {}, overrides: { redis: { cluster, prefix: 'shop:{storesync}' } } }).redis.cluster).toEqual(cluster);
  });

  it('refuses a bad node and a mistyped key, and never shows a password in a problem', () => {
    const problems = problemsOf({ redis: { sentinels: [{ host: '10.0.0.1', port: 0 }], name: 'main', sentinelPassword: 7, sentinalPassword: 'x' } });
    expect(problems).toContainEqual(expect.stringMatching(/^redis\.sentinels\[0\]\.port: 0/));
    expect(problems).toContainEqual(expect.stringMatching(/^redis\.sentinelPassword: \[redacted\]/));
    expect(problems).toContainEqual(expect.stringMatching(/redis\.sentinalPassword.*sentinelPassword/));
  });

  it('takes tls as true or an object with a CA file, and names a mistyped key in it', () => {
    expect(loadConfig({ env: {}, overrides: { redis: { cluster, prefix: '{s}', tls: true } } }).redis.tls).toBe(true);
    expect(loadConfig({ env: {}, overrides: { redis: { tls: { caFile: '/etc/ca.pem' } } } }).redis.tls).toEqual({ caFile: '/etc/ca.pem', rejectUnauthorized: true });
    expect(problemsOf({ redis: { tls: { caFil: '/etc/ca.pem' } } })).toContainEqual(expect.stringMatching(/redis\.tls\.caFil.*caFile/));
  });

  it('describes a url without its password', () => {
    expect(describeRedis('redis://:hunter22@10.0.0.1:6379/0')).not.toContain('hunter22');
    expect(redisSecrets('redis://:hunter22@10.0.0.1:6379/0')).toEqual(['hunter22']);
  });
});
