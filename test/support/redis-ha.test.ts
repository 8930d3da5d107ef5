/** test/support/redis-ha.ts: the real Sentinel set and Cluster the high-availability tests run on start, fail over and stop. */
import { existsSync } from 'node:fs';

import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

import { startRedisCluster, startSentinelSet } from './redis-ha.js';

describe('startSentinelSet', () => {
  it('starts a primary, a replica and three sentinels; a killed primary is replaced by the replica; stop removes every folder', async () => {
    const set = await startSentinelSet({ password: 'data-secret', sentinelPassword: 'sentinel-secret' });
    const dirs = [set.primary.dir, set.replica.dir, ...set.sentinels.map((sentinel) => sentinel.dir)];
    try {
      expect(set.sentinelNodes).toHaveLength(3);
      expect(await set.masterPort()).toBe(set.primary.port);
      await set.primary.kill();
      expect(await set.waitForNewMaster(set.primary.port)).toBe(set.replica.port);
      const client = new Redis({ host: '127.0.0.1', port: set.replica.port, password: 'data-secret' });
      try {
        expect(await client.set('after-failover', '1')).toBe('OK');
      } finally {
        client.disconnect();
      }
    } finally {
      await set.stop();
    }
    for (const dir of dirs) expect(existsSync(dir)).toBe(false);
  }, 90_000);
});

describe('startRedisCluster', () => {
  it('starts three masters with a replica each, healthy, and stops them', async () => {
    const cluster = await startRedisCluster({ replicasPerMaster: 1 });
    const dirs = cluster.nodes.map((node) => node.dir);
    try {
      expect(cluster.startupNodes).toHaveLength(6);
      const client = new Redis.Cluster(cluster.startupNodes.map((node) => ({ ...node })));
      try {
        await client.set('{storesync}:k', 'v');
        expect(await client.get('{storesync}:k')).toBe('v');
      } finally {
        client.disconnect();
      }
    } finally {
      await cluster.stop();
    }
    for (const dir of dirs) expect(existsSync(dir)).toBe(false);
  }, 90_000);
});
