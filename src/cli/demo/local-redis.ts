/**
 * Redis for the demo: the one at `url` when it answers, otherwise a throwaway `redis-server` (temp
 * directory, no persistence, a spare port) when the binary is installed. Without either the demo
 * cannot run, and says so in one line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

import { Redis } from 'ioredis';

/** A Redis the demo can use. */
export interface DemoRedis {
  readonly url: string;
  /** True when the demo started the server (and stops it in `stop`). */
  readonly started: boolean;
  stop(): Promise<void>;
}

/** Raised when no Redis answers and none can be started. */
export class RedisUnavailableError extends Error {
  constructor(url: string) {
    super(`storesync demo needs Redis: nothing answers on ${url.replace(/\/\/[^@/]*@/, '//')} and redis-server is not installed (install it: apt-get install redis-server, brew install redis)`);
    this.name = 'RedisUnavailableError';
  }
}

/** Options of `ensureRedis`. */
export interface EnsureRedisOptions {
  /** The Redis to try first. */
  url: string;
  /** Where to look for redis-server: the PATH of the CLI's environment. */
  searchPath: string;
  /** Time allowed to each connection attempt. */
  timeoutMs?: number;
}

/** True when a Redis at `url` answers PING. */
export async function redisAnswers(url: string, timeoutMs = 1000): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function findRedisServer(searchPath: string): string | undefined {
  return searchPath
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, 'redis-server'))
    .find((path) => existsSync(path));
}

async function sparePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no spare port');
  return address.port;
}

/** Finds or starts a Redis for the demo. */
export async function ensureRedis(options: EnsureRedisOptions): Promise<DemoRedis> {
  const timeoutMs = options.timeoutMs ?? 1000;
  if (await redisAnswers(options.url, timeoutMs)) return { url: options.url, started: false, stop: async () => undefined };
  const binary = findRedisServer(options.searchPath);
  if (!binary) throw new RedisUnavailableError(options.url);

  const port = await sparePort();
  const dir = mkdtempSync(join(tmpdir(), 'storesync-demo-redis-'));
  const child: ChildProcess = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}/0`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url, timeoutMs))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server (${binary}) did not start on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, started: true, stop };
}
