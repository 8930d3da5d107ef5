/**
 * Real replicated Redis for the high-availability tests: a primary, a replica and three sentinels, or a Redis Cluster
 * (three masters, optionally one replica each), all on spare loopback ports with their own temp folders. Nothing is
 * mocked: the processes are redis-server (and `redis-server <conf> --sentinel`); `stop()` ends them and removes the folders.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

import { Redis } from 'ioredis';

import { redisAnswers, type RedisServer, sparePort, startRedisServer } from '../../src/queue/redis-server.js';
import { waitFor } from '../../src/wait-for.js';

const run = promisify(execFile);

/** The append-only file a server started in `dir` appends to now (Redis 7: appendonlydir/<name>.<n>.incr.aof). */
export function incrFile(dir: string): string {
  const folder = join(dir, 'appendonlydir');
  const file = readdirSync(folder).find((name) => name.endsWith('.incr.aof'));
  if (!file) throw new Error(`no incremental AOF in ${folder}`);
  return join(folder, file);
}

/** A host and port, as `redis.sentinels` and `redis.cluster` take them. */
export interface RedisNode {
  host: string;
  port: number;
}

/** One `redis-server <conf> --sentinel` process. */
export interface SentinelProcess {
  readonly port: number;
  readonly dir: string;
  kill(): Promise<void>;
}

/** A primary, a replica and three sentinels watching them under one master name. */
export interface SentinelSet {
  /** The master group name (`redis.name`). */
  readonly name: string;
  readonly primary: RedisServer;
  readonly replica: RedisServer;
  readonly sentinels: readonly SentinelProcess[];
  /** `redis.sentinels` for this set. */
  readonly sentinelNodes: readonly RedisNode[];
  /** The data nodes' password (`redis.password`), when the set was started with one. */
  readonly password: string | undefined;
  /** The sentinels' own password (`redis.sentinelPassword`), when started with one. */
  readonly sentinelPassword: string | undefined;
  /** The port Sentinel currently names as the master (asks the first sentinel that answers). */
  masterPort(): Promise<number>;
  /** Resolves once the sentinels name a master other than `oldPort` and that master accepts writes. */
  waitForNewMaster(oldPort: number, timeoutMs?: number): Promise<number>;
  /** Ends every process and removes the folders. */
  stop(): Promise<void>;
}

/** How the sentinel set is started. */
export interface SentinelSetOptions {
  /** @defaultValue 'storesync' */
  name?: string;
  /** requirepass/masterauth on the primary and the replica (and `auth-pass` in the sentinels). */
  password?: string;
  /** requirepass on the sentinels themselves. */
  sentinelPassword?: string;
  /** Sentinel's `down-after-milliseconds`. @defaultValue 1000 */
  downAfterMs?: number;
  /** Append-only file on the data nodes (`appendfsync everysec`, as production runs). @defaultValue false */
  aof?: boolean;
}

const SENTINEL_COUNT = 3;
const QUORUM = 2;

function persistenceArgs(aof: boolean | undefined): string[] {
  return aof ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : [];
}

/** Starts one sentinel with a config file of its own (Sentinel rewrites it, so it must be writable). */
async function startSentinel(options: { name: string; masterPort: number; password?: string; sentinelPassword?: string; downAfterMs: number }): Promise<SentinelProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'storesync-sentinel-'));
  for (let attempt = 1; ; attempt += 1) {
    const port = await sparePort();
    const conf = [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `logfile ${join(dir, 'sentinel.log')}`,
      `sentinel monitor ${options.name} 127.0.0.1 ${options.masterPort} ${QUORUM}`,
      `sentinel down-after-milliseconds ${options.name} ${options.downAfterMs}`,
      `sentinel failover-timeout ${options.name} 10000`,
      `sentinel parallel-syncs ${options.name} 1`,
      ...(options.password === undefined ? [] : [`sentinel auth-pass ${options.name} ${options.password}`]),
      ...(options.sentinelPassword === undefined ? [] : [`requirepass ${options.sentinelPassword}`]),
      '',
    ].join('\n');
    const file = join(dir, 'sentinel.conf');
    writeFileSync(file, conf);
    const child: ChildProcess = spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' });
    let ended = false;
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => {
        ended = true;
        resolve();
      });
      child.once('error', () => {
        ended = true;
        resolve();
      });
    });
    const url = options.sentinelPassword === undefined ? `redis://127.0.0.1:${port}` : `redis://:${encodeURIComponent(options.sentinelPassword)}@127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    let up = false;
    while (!ended && Date.now() < deadline) {
      if (await redisAnswers(url, 1000)) {
        up = true;
        break;
      }
      await sleep(50);
    }
    if (up) {
      return {
        port,
        dir,
        async kill() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (!ended) child.kill('SIGKILL');
    await exited;
    if (attempt >= 3) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server --sentinel did not answer on port ${port}`);
    }
  }
}

/** Starts a primary, a replica of it, and three sentinels; resolves once the sentinels see the replica. */
export async function startSentinelSet(options: SentinelSetOptions = {}): Promise<SentinelSet> {
  const name = options.name ?? 'storesync';
  const stops: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const one of stops.splice(0).reverse()) await one().catch(() => undefined);
  };
  try {
    const primary = await startRedisServer({ password: options.password, args: persistenceArgs(options.aof) });
    stops.push(() => primary.destroy());
    const replica = await startRedisServer({ password: options.password, args: [...persistenceArgs(options.aof), '--replicaof', '127.0.0.1', String(primary.port)] });
    stops.push(() => replica.destroy());
    const admin = (port: number): Redis => new Redis({ host: '127.0.0.1', port, password: options.password, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    const replicaClient = admin(replica.port);
    try {
      await waitFor(async () => /master_link_status:up/.test(await replicaClient.info('replication')), { message: 'the replica to sync', timeoutMs: 20_000 });
    } finally {
      replicaClient.disconnect();
    }
    const sentinels: SentinelProcess[] = [];
    for (let i = 0; i < SENTINEL_COUNT; i += 1) {
      const sentinel = await startSentinel({ name, masterPort: primary.port, password: options.password, sentinelPassword: options.sentinelPassword, downAfterMs: options.downAfterMs ?? 1000 });
      sentinels.push(sentinel);
      stops.push(() => sentinel.kill());
    }
    const sentinelClient = (port: number): Redis =>
      new Redis({ host: '127.0.0.1', port, password: options.sentinelPassword, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    const askSentinels = async <T>(ask: (client: Redis) => Promise<T>): Promise<T> => {
      let last: unknown;
      for (const sentinel of sentinels) {
        const client = sentinelClient(sentinel.port);
        client.on('error', () => undefined);
        try {
          return await ask(client);
        } catch (error) {
          last = error;
        } finally {
          client.disconnect();
        }
      }
      throw last instanceof Error ? last : new Error('no sentinel answered');
    };
    // Every sentinel must know the replica and the other sentinels before a failover can be elected.
    await waitFor(
      async () => {
        for (const sentinel of sentinels) {
          const client = sentinelClient(sentinel.port);
          try {
            const replicas = (await client.call('SENTINEL', 'REPLICAS', name)) as unknown[];
            const peers = (await client.call('SENTINEL', 'SENTINELS', name)) as unknown[];
            if (replicas.length < 1 || peers.length < SENTINEL_COUNT - 1) return false;
          } finally {
            client.disconnect();
          }
        }
        return true;
      },
      { message: 'the sentinels to discover the replica and each other', timeoutMs: 30_000 },
    );
    const masterPort = (): Promise<number> =>
      askSentinels(async (client) => {
        const address = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string];
        return Number(address[1]);
      });
    return {
      name,
      primary,
      replica,
      sentinels,
      sentinelNodes: sentinels.map((sentinel) => ({ host: '127.0.0.1', port: sentinel.port })),
      password: options.password,
      sentinelPassword: options.sentinelPassword,
      masterPort,
      async waitForNewMaster(oldPort, timeoutMs = 30_000) {
        let found = oldPort;
        await waitFor(
          async () => {
            found = await masterPort().catch(() => oldPort);
            if (found === oldPort) return false;
            const client = admin(found);
            client.on('error', () => undefined);
            try {
              return /role:master/.test(await client.info('replication'));
            } catch {
              return false;
            } finally {
              client.disconnect();
            }
          },
          { message: `Sentinel to promote a new master in place of port ${oldPort}`, timeoutMs },
        );
        return found;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs `command` on one data node, on a connection of its own (not through Sentinel or a cluster client). */
export async function onRedisNode<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    return await command(client);
  } finally {
    client.disconnect();
  }
}

/** A Redis Cluster of redis-server processes. */
export interface RedisClusterSet {
  /** Every node, masters first as `redis-cli --cluster create` assigned them. */
  readonly nodes: readonly RedisServer[];
  /** `redis.cluster` for this cluster. */
  readonly startupNodes: readonly RedisNode[];
  readonly password: string | undefined;
  /** Resolves once every live node reports `cluster_state:ok`. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** After a master on `port` was killed: resolves once the others marked it failed and the cluster is ok again. */
  waitForFailover(port: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** How the cluster is started. */
export interface RedisClusterOptions {
  /** @defaultValue 3 (the minimum Redis Cluster accepts) */
  masters?: number;
  /** Replicas per master (1 for failover tests: six nodes). @defaultValue 0 */
  replicasPerMaster?: number;
  /** requirepass/masterauth on every node. */
  password?: string;
  /** `cluster-node-timeout`: how soon a dead master is failed over. @defaultValue 2000 */
  nodeTimeoutMs?: number;
}

/** Starts the nodes with `--cluster-enabled yes`, joins them with `redis-cli --cluster create`, waits for `cluster_state:ok`. */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisClusterSet> {
  const masters = options.masters ?? 3;
  const count = masters * (1 + (options.replicasPerMaster ?? 0));
  const nodes: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    for (const node of nodes.splice(0).reverse()) await node.destroy().catch(() => undefined);
  };
  try {
    for (let i = 0; i < count; i += 1) {
      nodes.push(
        await startRedisServer({
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 2000)],
          password: options.password,
        }),
      );
    }
    await run(
      'redis-cli',
      [
        ...(options.password === undefined ? [] : ['-a', options.password, '--no-auth-warning']),
        '--cluster', 'create', ...nodes.map((node) => `127.0.0.1:${node.port}`),
        '--cluster-replicas', String(options.replicasPerMaster ?? 0), '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
    const waitHealthy = async (timeoutMs = 30_000): Promise<void> => {
      await waitFor(
        async () => {
          for (const node of nodes) {
            const client = new Redis({ host: '127.0.0.1', port: node.port, password: options.password, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
            client.on('error', () => undefined);
            try {
              const info = (await client.call('CLUSTER', 'INFO')) as string;
              if (!/cluster_state:ok/.test(info)) return false;
            } catch {
              // A killed node does not answer; the live ones decide.
            } finally {
              client.disconnect();
            }
          }
          return true;
        },
        { message: 'the cluster to report cluster_state:ok', timeoutMs },
      );
    };
    await waitHealthy(60_000);
    // A replica can take over only once it has synced: wait for every one of them to be linked to its master.
    const replicas = count - masters;
    await waitFor(
      async () => {
        let linked = 0;
        for (const node of nodes) {
          const client = new Redis({ host: '127.0.0.1', port: node.port, password: options.password, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
          client.on('error', () => undefined);
          try {
            const info = await client.info('replication');
            if (/role:slave/.test(info) && /master_link_status:up/.test(info)) linked += 1;
          } finally {
            client.disconnect();
          }
        }
        return linked === replicas;
      },
      { message: `the ${replicas} cluster replicas to sync with their masters`, timeoutMs: 60_000 },
    );
    return {
      nodes,
      startupNodes: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
      password: options.password,
      waitHealthy,
      async waitForFailover(port, timeoutMs = 60_000) {
        const live = nodes.filter((node) => node.port !== port);
        await waitFor(
          async () => {
            const client = new Redis({ host: '127.0.0.1', port: live[0]?.port, password: options.password, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
            client.on('error', () => undefined);
            try {
              const lines = ((await client.call('CLUSTER', 'NODES')) as string).split('\n');
              const dead = lines.find((line) => line.includes(`:${port}@`)) ?? '';
              return /\bfail\b/.test(dead) && !/fail\?/.test(dead);
            } finally {
              client.disconnect();
            }
          },
          { message: `the cluster to mark the node on port ${port} failed`, timeoutMs },
        );
        await waitHealthy(timeoutMs);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
