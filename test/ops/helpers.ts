/** Test helpers of the ops tests: config, log capture, a private redis-server, promtool. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { loadConfig, mergeDeep } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger, type Logger } from '../../src/log.js';
import { waitFor } from '../queue/redis-helpers.js';

/** A Redis key prefix of its own for one test file. */
export function testPrefix(): string {
  return `test-${randomUUID()}`;
}

/** A validated config for tests: HTTP on a random port, the given prefix, nothing read from process.env. */
export function testConfig(overrides: Record<string, unknown>): Readonly<Config> {
  return loadConfig({
    env: {},
    overrides: mergeDeep({ http: { host: '127.0.0.1', port: 0 }, log: { level: 'debug' }, shutdown: { timeoutMs: 5000 } }, overrides),
  });
}

/** A logger whose JSON lines are kept for assertions. */
export function logCollector(level: 'debug' | 'info' = 'debug'): { logger: Logger; lines(): Array<Record<string, unknown>>; text(): string } {
  let text = '';
  const logger = createLogger({ level, destination: { write: (line: string) => (text += line) } });
  return {
    logger,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A TCP port nothing listens on (found free, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A redis-server of the test's own on a spare port, which the test may stop and start again. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server and removes its directory. */
  destroy(): Promise<void>;
}

/** Starts a private redis-server (never the shared 6379); `extraArgs` are added to its command line. */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<RedisServer> {
  if (!existsSync('/usr/bin/redis-server')) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'storesync-redis-'));
  let child: ChildProcess | undefined;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs], {
        stdio: 'ignore',
      });
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await waitFor(async () => probe.connect().then(() => probe.ping()).catch(() => false), { message: `redis-server on ${port}` });
      } finally {
        probe.disconnect();
      }
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    async destroy() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** Runs promtool; fails with a clear message when it is not installed. */
export async function promtool(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((path) => existsSync(path));
  if (!bin) throw new Error('promtool is missing: install the Debian package "prometheus" (.ci/run does)');
  return new Promise((resolve) => {
    const child = execFile(bin, args, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** The value of a Basic authorization header. */
export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
