/**
 * Redis for the demo, so that `npm ci && npm run demo` needs no set-up on a fresh machine. In order:
 * 1. a Redis that answers at `url` (REDIS_URL, default 127.0.0.1:6379) is used as it is;
 * 2. else a `redis-server` or `valkey-server` on the PATH is started privately (spare port, temp folder,
 *    no persistence) and stopped with the demo;
 * 3. else, on Debian/Ubuntu (apt-get present), as root or through passwordless sudo (`sudo -n`), the
 *    package `redis-server` is installed, announced in one line (the package lists are refreshed and the
 *    install tried again once if it fails), and then 1 or 2 applies;
 * 4. else the demo stops with one line saying what to install.
 * A Redis from an npm package was considered for between 3 and 4 (redis-memory-server), but none works
 * without downloading a Redis source or binary from outside the npm registry at install or run time.
 * Every probe of the machine is a dependency (`RedisProbes`) so that each branch is tested without a network.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { userInfo } from 'node:os';
import { delimiter, join } from 'node:path';

import { redisAnswers, startRedisServer } from '../../queue/redis-server.js';

/** Programs that serve Redis, in order of preference. */
export const SERVER_PROGRAMS = ['redis-server', 'valkey-server'] as const;

/** Where the demo's Redis came from. */
export type RedisOrigin = 'running' | 'started' | 'installed';

/** A Redis the demo can use. */
export interface DemoRedis {
  readonly url: string;
  /** `running`: it answered at the URL; `started`: a private server of the demo's; `installed`: installed, then used or started. */
  readonly origin: RedisOrigin;
  /** True when the demo started the server (and stops it in `stop`). */
  readonly started: boolean;
  stop(): Promise<void>;
}

/** Raised when no Redis answers and none can be started or installed; its message is the one line to print. */
export class RedisUnavailableError extends Error {
  constructor(url: string, why: string) {
    super(
      `storesync demo needs Redis: nothing answers on ${url.replace(/\/\/[^@/]*@/, '//')}, no redis-server or valkey-server is on the PATH, ` +
        `and ${why}. Install one (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis) or set REDIS_URL`,
    );
    this.name = 'RedisUnavailableError';
  }
}

/** What a command printed and how it ended. */
export interface CommandResult {
  ok: boolean;
  output: string;
}

/** How `ensureRedis` looks at the machine; `systemProbes` are the real ones. */
export interface RedisProbes {
  /** True when a Redis answers PING at `url`. */
  answers(url: string): Promise<boolean>;
  /** The path of the first program of `names` found on the PATH. */
  which(names: readonly string[]): string | undefined;
  /** True when running as root. */
  isRoot(): boolean;
  /** True when `sudo -n` works (sudo is there and needs no password). */
  passwordlessSudo(): Promise<boolean>;
  /** Runs a command to its end. */
  run(command: readonly string[]): Promise<CommandResult>;
  /** Starts a private server with `binary`. */
  startServer(binary: string): Promise<{ url: string; stop(): Promise<void> }>;
}

/** Options of `ensureRedis`. */
export interface EnsureRedisOptions {
  /** The Redis to try first. */
  url: string;
  /** Told, in one line, what the demo does to the machine (starting a server, installing a package). */
  announce(line: string): void;
}

/** Last non-empty line of a command's output, to say why it failed. */
function lastLine(output: string): string {
  return output.trim().split('\n').filter((line) => line.trim() !== '').at(-1)?.trim() ?? '(no output)';
}

/**
 * Installs redis-server with apt-get as root or through `sudo -n`; returns undefined once installed, or
 * why it cannot be. A failed install is tried again once after `apt-get update`: a fresh image has no package lists.
 */
async function installRedis(probes: RedisProbes, options: EnsureRedisOptions): Promise<string | undefined> {
  if (probes.which(['apt-get']) === undefined) return 'apt-get is not available to install it (not Debian/Ubuntu)';
  const root = probes.isRoot();
  if (!root && !(await probes.passwordlessSudo())) return 'installing it needs root or passwordless sudo (sudo -n)';
  const elevate = root ? [] : ['sudo', '-n'];
  const apt = (...args: string[]): string[] => [...elevate, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args];
  options.announce(`storesync demo: no Redis found; installing the Debian package redis-server (${apt('install', '-y', 'redis-server').join(' ')})`);
  let result = await probes.run(apt('install', '-y', 'redis-server'));
  if (!result.ok) {
    const update = await probes.run(apt('update'));
    if (!update.ok) return `apt-get update failed: ${lastLine(update.output)}`;
    result = await probes.run(apt('install', '-y', 'redis-server'));
  }
  return result.ok ? undefined : `apt-get install redis-server failed: ${lastLine(result.output)}`;
}

/** Uses the Redis that answers at `url`, or starts a private one from a program on the PATH; undefined if neither. */
async function useOrStart(probes: RedisProbes, options: EnsureRedisOptions, origin: RedisOrigin): Promise<DemoRedis | undefined> {
  if (await probes.answers(options.url)) return { url: options.url, origin: origin === 'installed' ? 'installed' : 'running', started: false, stop: async () => undefined };
  const binary = probes.which(SERVER_PROGRAMS);
  if (binary === undefined) return undefined;
  const server = await probes.startServer(binary);
  options.announce(`storesync demo: no Redis answers on ${options.url}; started ${binary} at ${server.url} for the demo (stopped with it)`);
  return { url: server.url, origin, started: true, stop: () => server.stop() };
}

/** Finds, starts or installs a Redis for the demo (see the module comment); throws RedisUnavailableError with the one line to print. */
export async function ensureRedis(options: EnsureRedisOptions, probes: RedisProbes): Promise<DemoRedis> {
  const found = await useOrStart(probes, options, 'started');
  if (found) return found;
  const cannotInstall = await installRedis(probes, options);
  if (cannotInstall !== undefined) throw new RedisUnavailableError(options.url, cannotInstall);
  const installed = await useOrStart(probes, options, 'installed');
  if (installed) return installed;
  throw new RedisUnavailableError(options.url, 'redis-server was installed but is still not on the PATH');
}

/** Runs a command without a shell, collecting its output; never throws. */
function runCommand(command: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<CommandResult> {
  const [program, ...args] = command;
  if (program === undefined) return Promise.resolve({ ok: false, output: 'empty command' });
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', (error) => resolve({ ok: false, output: `${output}\n${error.message}` }));
    child.once('close', (code) => resolve({ ok: code === 0, output }));
  });
}

/** The probes of the real machine, with the PATH of `env` (the CLI's environment). */
export function systemProbes(env: Readonly<Record<string, string | undefined>>): RedisProbes {
  const dirs = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  const which = (names: readonly string[]): string | undefined => {
    for (const name of names) {
      for (const dir of dirs) {
        const path = join(dir, name);
        try {
          accessSync(path, constants.X_OK);
          return path;
        } catch {
          // Not in this folder.
        }
      }
    }
    return undefined;
  };
  return {
    answers: (url) => redisAnswers(url),
    which,
    isRoot: () => userInfo().uid === 0,
    async passwordlessSudo() {
      const sudo = which(['sudo']);
      return sudo !== undefined && (await runCommand([sudo, '-n', 'true'], env)).ok;
    },
    run: (command) => runCommand(command, env),
    async startServer(binary) {
      const server = await startRedisServer({ binary });
      return { url: server.url, stop: () => server.destroy() };
    },
  };
}
