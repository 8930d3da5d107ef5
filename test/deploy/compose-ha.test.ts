/**
 * docker-compose.ha.yml (no Docker engine here: checked as YAML) matches the topology test/support/redis-ha.ts starts:
 * a primary, a replica of it, three sentinels with quorum 2 on the master group storesync's config names, and
 * storesync configured through the sentinels. deploy/ha/*.yaml load as valid configurations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

import { loadConfig, packageRoot } from '../../src/config/load.js';

const root = packageRoot();
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  volumes?: string[];
  depends_on?: Record<string, unknown> | string[];
}

describe('docker-compose.ha.yml', () => {
  const compose = parseYaml(read('docker-compose.ha.yml'), { merge: true }) as { services: Record<string, Service> };
  const services = compose.services;
  const config = loadConfig({ env: {}, configFile: join(root, 'deploy/ha/sentinel.yaml') });

  it('has a primary, a replica of it, three sentinels and storesync', () => {
    expect(Object.keys(services).sort()).toEqual(['redis-primary', 'redis-replica', 'sentinel-1', 'sentinel-2', 'sentinel-3', 'storesync']);
    const replica = services['redis-replica']?.command ?? [];
    expect(replica.slice(replica.indexOf('--replicaof'), replica.indexOf('--replicaof') + 3)).toEqual(['--replicaof', 'redis-primary', '6379']);
    for (const name of ['redis-primary', 'redis-replica']) {
      // Production settings: AOF flushed every second (what a lagging failover may lose), no eviction of queue keys.
      expect(services[name]?.command?.join(' ')).toContain('--appendonly yes --appendfsync everysec --maxmemory-policy noeviction');
    }
  });

  it('runs each sentinel on the master group storesync names, quorum 2 of 3, on port 26379', () => {
    for (const name of ['sentinel-1', 'sentinel-2', 'sentinel-3']) {
      const script = services[name]?.command?.join('\n') ?? '';
      expect(script).toContain(`sentinel monitor ${config.redis.name} redis-primary 6379 2`);
      expect(script).toContain('port 26379');
      expect(script).toContain('--sentinel');
    }
  });

  it('points storesync at the three sentinels through deploy/ha/sentinel.yaml', () => {
    expect(services.storesync?.volumes).toContainEqual(expect.stringContaining('./deploy/ha/sentinel.yaml}:/etc/storesync/config.yaml'));
    expect(config.redis.sentinels).toEqual(['sentinel-1', 'sentinel-2', 'sentinel-3'].map((host) => ({ host, port: 26379 })));
    expect(config.redis.url).toBeUndefined();
  });

  it('has a cluster example that loads, its prefix a hash tag', () => {
    const cluster = loadConfig({ env: {}, configFile: join(root, 'deploy/ha/cluster.yaml') });
    expect(cluster.redis.cluster).toHaveLength(3);
    expect(cluster.redis.prefix).toBe('{storesync}');
  });
});
