/**
 * A redis-server of the run's own, on a spare loopback port in a temp folder: the chaos run kills and
 * restarts it, and the benchmarks read its command statistics, without touching the shared 6379.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { type Child, startChild } from './child.js';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

/** How the server is started. */
export interface RedisServerOptions {
  /** Append-only file with `appendfsync always`: nothing acknowledged is lost on a kill. */
  aof?: boolean;
  /** Folder for the data and the log; a new temp folder when absent (removed by `destroy`). */
  dir?: string;
}

/** A running (or stopped) redis-server of the run's own. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Kills the server with SIGKILL (no shutdown save) and waits for the end. */
  kill(): Promise<void>;
  /** Starts it again on the same port and folder (the AOF is replayed); waits until it answers. */
  start(): Promise<void>;
  /** Per-command call counts from `INFO commandstats`. */
  commandCalls(): Promise<Map<string, number>>;
  /** CPU time the server has used (user + system), ms. */
  cpuMs(): Promise<number>;
  /** Stops the server and removes its folder. */
  destroy(): Promise<void>;
}

/** Starts a redis-server on a spare port and waits until it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'storesync-redis-'));
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    '--daemonize', 'no', '--maxmemory-policy', 'noeviction',
    ...(options.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  ];
  const url = `redis://127.0.0.1:${port}/0`;
  let child: Child | undefined;

  const ping = async (): Promise<boolean> => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } finally {
      client.disconnect();
    }
  };
  const info = async (section: string): Promise<string> => {
    const client = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      return await client.info(section);
    } finally {
      client.disconnect();
    }
  };
  const start = async (): Promise<void> => {
    child = startChild('redis-server', args, join(dir, 'redis.log'));
    await waitFor(`redis-server on port ${port}`, async () => {
      if (!child?.alive()) throw new Error(`redis-server exited; see ${join(dir, 'redis.log')}`);
      return ping();
    }, { timeoutMs: 20_000 });
  };
  await start();

  return {
    port,
    url,
    dir,
    async kill() {
      child?.kill('SIGKILL');
      await child?.exited;
    },
    start,
    async cpuMs() {
      const text = await info('cpu');
      const seconds = (name: string): number => Number(text.match(new RegExp(`^${name}:([\\d.]+)`, 'm'))?.[1] ?? Number.NaN);
      return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
    },
    async commandCalls() {
      const text = await info('commandstats');
      const calls = new Map<string, number>();
      for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1] as string, Number(match[2]));
      return calls;
    },
    async destroy() {
      await child?.stop(3000);
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Total calls in `after` minus `before`, leaving out the commands the measurement itself sends. */
export function commandDelta(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): { total: number; byCommand: Record<string, number> } {
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const [command, calls] of after) {
    if (command === 'info') continue;
    const delta = calls - (before.get(command) ?? 0);
    if (delta > 0) {
      byCommand[command] = delta;
      total += delta;
    }
  }
  return { total, byCommand };
}
