/**
 * The chaos run's Redis and the Redis faults it injects. One server (AOF, fsync always): killed once and
 * started again. `--ha`: a primary, a replica and three sentinels (test/support/redis-ha.ts, AOF everysec on
 * both): the master is SIGKILLed and the replica promoted, the dead node comes back as a replica; later the
 * replica is held back (`CLIENT PAUSE WRITE`: it reads the stream, applies nothing), the master is killed and
 * that lagging replica promoted, so the new master lacks the last writes.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { Redis } from 'ioredis';

import { type RedisServer, startRedisServer } from '../../../src/queue/redis-server.js';
import { waitFor } from '../../../src/wait-for.js';
import { onRedisNode, type SentinelSet, startSentinelSet } from '../../../test/support/redis-ha.js';

/** What the run needs of its Redis. */
export interface ChaosRedis {
  /** `redis` of the daemons' configuration (the prefix is added by the caller). */
  readonly config: Record<string, unknown>;
  /** Where it is, for the log. */
  readonly describe: string;
  /** A connection of the run's own (checks, recovery watch). */
  connect(options?: { maxRetriesPerRequest?: number }): Redis;
  /** The faults, at shares of the run's duration: each is told once when its time comes. */
  readonly faults: ReadonlyArray<{ at: number; inject(note: (line: string) => void): Promise<void> }>;
  destroy(): Promise<void>;
}

/** One server, killed once at `restartAt`. */
export async function singleRedis(dir: string, restartAt: number): Promise<ChaosRedis> {
  const server = await startRedisServer({ aof: true, dir });
  return {
    config: { url: server.url },
    describe: `redis ${server.url} (AOF always)`,
    connect: (options = {}) => new Redis(server.url, { maxRetriesPerRequest: options.maxRetriesPerRequest ?? 3 }),
    faults: [
      {
        at: restartAt,
        async inject(note) {
          await server.kill();
          note('redis-server killed (SIGKILL)');
          await sleep(1500);
          await server.start();
          note('redis-server started again (AOF replayed)');
        },
      },
    ],
    destroy: () => server.destroy(),
  };
}


/** Sentinel: a primary kill at `killAt`, a failover to a lagging replica at `lagAt`. */
export async function sentinelRedis(killAt: number, lagAt: number): Promise<ChaosRedis> {
  const set: SentinelSet = await startSentinelSet({ aof: true, downAfterMs: 1000 });
  const nodes: RedisServer[] = [set.primary, set.replica];
  const byPort = (port: number): RedisServer => {
    const found = nodes.find((node) => node.port === port);
    if (!found) throw new Error(`no data node on port ${port}`);
    return found;
  };
  /** Kills the master, waits for the promotion, brings the dead node back as a replica of the new master. */
  const failover = async (note: (line: string) => void, lagging: boolean): Promise<void> => {
    const masterPort = await set.masterPort();
    const replica = nodes.find((node) => node.port !== masterPort)!;
    if (lagging) {
      await onRedisNode(replica.port, (client) => client.call('CLIENT', 'PAUSE', '30000', 'WRITE'));
      note(`replica ${replica.port} paused (CLIENT PAUSE WRITE): it reads the stream and applies nothing`);
      await sleep(1500);
    }
    await byPort(masterPort).kill();
    note(`master ${masterPort} killed (SIGKILL)${lagging ? ' while its replica lagged' : ''}`);
    if (lagging) await onRedisNode(replica.port, (client) => client.call('CLIENT', 'UNPAUSE'));
    const next = await set.waitForNewMaster(masterPort, 60_000);
    note(`Sentinel promoted ${next}`);
    const dead = byPort(masterPort);
    await dead.start();
    await onRedisNode(dead.port, (client) => client.call('REPLICAOF', '127.0.0.1', String(next)));
    await waitFor(async () => /master_link_status:up/.test(await onRedisNode(dead.port, (client) => client.info('replication'))), {
      timeoutMs: 60_000,
      message: `${dead.port} to replicate the new master`,
    });
    note(`${dead.port} back as a replica of ${next}`);
  };
  return {
    config: { sentinels: set.sentinelNodes.map((node) => ({ ...node })), name: set.name },
    describe: `sentinels ${set.sentinelNodes.map((node) => node.port).join(',')} (master ${set.name}: ${set.primary.port}, replica ${set.replica.port}, AOF everysec)`,
    connect: (options = {}) =>
      new Redis({ sentinels: set.sentinelNodes.map((node) => ({ ...node })), name: set.name, maxRetriesPerRequest: options.maxRetriesPerRequest ?? 3 }),
    faults: [
      { at: killAt, inject: (note) => failover(note, false) },
      { at: lagAt, inject: (note) => failover(note, true) },
    ],
    destroy: () => set.stop(),
  };
}
