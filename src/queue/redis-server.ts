/**
 * A redis-server (or valkey-server) of one's own, on a spare loopback port with its own folder: the demo
 * starts one when no Redis answers, tests and the benchmarks start one they may kill and start again
 * without touching a shared Redis. Nothing is persisted unless asked (`aof`, for the chaos run).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Redis } from 'ioredis';

/** How the server is started. */
export interface RedisServerOptions {
  /** The server program: a path, or a name looked up on the PATH. @defaultValue 'redis-server' */
  binary?: string;
  /** Append-only file with `appendfsync always`: nothing acknowledged is lost on a kill. @defaultValue false */
  aof?: boolean;
  /** Folder for the data and the log (`redis.log`); a new temp folder when absent, removed by `destroy`. */
  dir?: string;
  /** More command-line arguments, such as `['--maxmemory', '1mb']`. */
  args?: readonly string[];
  /** Time allowed to each start until the server answers PING. @defaultValue 20000 */
  startTimeoutMs?: number;
  /** `requirepass` (and `masterauth`, for a replica) on the server; the URL carries it. */
  password?: string;
}

/** A running (or killed) server of one's own. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** The program that runs it. */
  readonly binary: string;
  /** Starts it again on the same port and folder (an AOF is replayed); resolves once it answers. */
  start(): Promise<void>;
  /** Kills it with SIGKILL (no shutdown save, as a crash would) and waits for the end. */
  kill(): Promise<void>;
  /** Stops it (SIGTERM, SIGKILL after 3 s) and removes its folder if it made it. */
  destroy(): Promise<void>;
}

/** Why a server did not start: its program is missing or cannot run, it exited, or it never answered. */
export type StartFailure = 'missing' | 'unrunnable' | 'exited' | 'timeout';

/** Raised when the server does not start; the message says why (with the end of its log). */
export class RedisServerStartError extends Error {
  readonly reason: StartFailure;

  constructor(reason: StartFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RedisServerStartError';
    this.reason = reason;
  }
}

/** Starts on a new spare port this many times when the server exits at once (another process took the port). */
const PORT_ATTEMPTS = 3;
const STOP_GRACE_MS = 3000;

/** True when a Redis at `url` answers PING within `timeoutMs`. */
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

/**
 * A free port on 127.0.0.1, released for the caller to bind (redis-server cannot be told "any port"); the tests and the
 * bench use it for their own servers too.
 */
export async function sparePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no spare port on 127.0.0.1');
  return address.port;
}

/** The last lines of what the server printed (a bad argument goes to stderr) or logged, to say why it did not start. */
function logTail(stderr: string, file: string): string {
  let text = stderr.trim();
  if (text === '') {
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      return '(no log)';
    }
  }
  return text.split('\n').filter((line) => line.trim() !== '').slice(-3).join(' | ') || '(no log)';
}

/** Starts a server on a spare port and resolves once it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? 'redis-server';
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'storesync-redis-'));
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'redis.log');
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  let port = 0;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const args = (): string[] => [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--logfile', logFile,
    '--save', '', '--daemonize', 'no', '--maxmemory-policy', 'noeviction',
    ...(options.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    ...(options.password === undefined ? [] : ['--requirepass', options.password, '--masterauth', options.password]),
    ...(options.args ?? []),
  ];
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;

  const launch = async (): Promise<void> => {
    const url = `redis://${auth}127.0.0.1:${port}/0`;
    const running = spawn(binary, args(), { stdio: ['ignore', 'ignore', 'pipe'] });
    child = running;
    let stderr = '';
    running.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    let failure: Error | undefined;
    let ended = false;
    exited = new Promise((resolve) => {
      running.once('error', (error) => {
        failure = error;
        ended = true;
        resolve();
      });
      running.once('exit', () => {
        ended = true;
        resolve();
      });
    });
    const deadline = Date.now() + timeoutMs;
    while (!(await redisAnswers(url, 1000))) {
      if (failure) {
        if ((failure as NodeJS.ErrnoException).code === 'ENOENT') {
          throw new RedisServerStartError('missing', `${binary} is not installed (not found on the PATH)`, { cause: failure });
        }
        throw new RedisServerStartError('unrunnable', `${binary} could not be run: ${failure.message}`, { cause: failure });
      }
      if (ended) throw new RedisServerStartError('exited', `${binary} exited before answering on port ${port}: ${logTail(stderr, logFile)}`);
      if (Date.now() > deadline) {
        running.kill('SIGKILL');
        await exited;
        throw new RedisServerStartError('timeout', `${binary} did not answer on port ${port} within ${timeoutMs} ms: ${logTail(stderr, logFile)}`);
      }
      await sleep(50);
    }
  };

  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    running.kill('SIGKILL');
    await exited;
  };

  for (let attempt = 1; ; attempt += 1) {
    port = await sparePort();
    try {
      await launch();
      break;
    } catch (error) {
      // An early exit is most often a port taken between sparePort() and the bind: try another one.
      const retry = error instanceof RedisServerStartError && error.reason === 'exited' && attempt < PORT_ATTEMPTS;
      if (!retry) {
        if (ownDir) rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}/0`,
    dir,
    binary,
    start: launch,
    kill,
    async destroy() {
      const running = child;
      if (running !== undefined && running.exitCode === null && running.signalCode === null) {
        running.kill('SIGTERM');
        const timer = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      child = undefined;
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
