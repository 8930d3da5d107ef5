import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type CommandResult, ensureRedis, type RedisProbes, RedisUnavailableError, SERVER_PROGRAMS, systemProbes } from '../../../src/cli/demo/local-redis.js';
import { redisAnswers, sparePort } from '../../../src/queue/redis-server.js';

const URL = 'redis://127.0.0.1:6379/0';
const INSTALL = ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', 'redis-server'];
const UPDATE = ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'update'];

/** A machine described by what its probes answer; an install may change what is on it. */
interface Machine {
  answers?: boolean;
  onPath?: string[];
  root?: boolean;
  sudo?: boolean;
  /** Outcomes of the commands run, in order (default: each succeeds). */
  results?: CommandResult[];
  /** What is on the machine once an install succeeded. */
  afterInstall?: { answers?: boolean; onPath?: string[] };
}

/** Probes answering as `machine` does, recording what the chain asked and did. */
function fakeMachine(machine: Machine) {
  const seen = { runs: [] as string[][], started: [] as string[], announced: [] as string[], sudoAsked: 0 };
  let installed = false;
  const state = () => (installed ? { ...machine, ...machine.afterInstall } : machine);
  const probes: RedisProbes = {
    answers: async () => state().answers ?? false,
    which: (names) => names.map((name) => ((state().onPath ?? []).includes(name) ? `/usr/bin/${name}` : undefined)).find((path) => path !== undefined),
    isRoot: () => machine.root ?? false,
    passwordlessSudo: async () => {
      seen.sudoAsked += 1;
      return machine.sudo ?? false;
    },
    run: async (command) => {
      seen.runs.push([...command]);
      const result = machine.results?.[seen.runs.length - 1] ?? { ok: true, output: '' };
      if (result.ok && command.includes('install')) installed = true;
      return result;
    },
    startServer: async (binary) => {
      seen.started.push(binary);
      return { url: 'redis://127.0.0.1:7777/0', stop: async () => undefined };
    },
  };
  const run = () => ensureRedis({ url: URL, announce: (line) => seen.announced.push(line) }, probes);
  return { seen, run };
}

/** The one-line error the chain ends with on `machine`. */
async function failure(machine: Machine): Promise<{ message: string; seen: ReturnType<typeof fakeMachine>['seen'] }> {
  const { seen, run } = fakeMachine(machine);
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RedisUnavailableError);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  expect(message).toContain('apt-get install redis-server');
  return { message, seen };
}

describe('the demo Redis decision chain', () => {
  it('uses the Redis that answers at REDIS_URL, and touches nothing else', async () => {
    const { seen, run } = fakeMachine({ answers: true, onPath: ['redis-server', 'apt-get'], root: true });
    expect(await run()).toMatchObject({ url: URL, origin: 'running', started: false });
    expect(seen).toEqual({ runs: [], started: [], announced: [], sudoAsked: 0 });
  });

  it('starts a private redis-server from the PATH when nothing answers, and says so in one line', async () => {
    const { seen, run } = fakeMachine({ onPath: ['redis-server', 'valkey-server', 'apt-get'], root: true });
    expect(await run()).toMatchObject({ url: 'redis://127.0.0.1:7777/0', origin: 'started', started: true });
    expect(seen.started).toEqual(['/usr/bin/redis-server']);
    expect(seen.runs).toEqual([]);
    expect(seen.announced).toEqual([expect.stringContaining('started /usr/bin/redis-server at redis://127.0.0.1:7777/0')]);
  });

  it('starts valkey-server when it is the only server on the PATH', async () => {
    const { seen, run } = fakeMachine({ onPath: ['valkey-server'] });
    expect(await run()).toMatchObject({ origin: 'started' });
    expect(seen.started).toEqual(['/usr/bin/valkey-server']);
  });

  it('installs redis-server with apt-get as root, announced in one line, then starts it', async () => {
    const { seen, run } = fakeMachine({ onPath: ['apt-get'], root: true, afterInstall: { onPath: ['apt-get', 'redis-server'] } });
    expect(await run()).toMatchObject({ origin: 'installed', started: true });
    expect(seen.runs).toEqual([INSTALL]);
    expect(seen.sudoAsked).toBe(0);
    expect(seen.started).toEqual(['/usr/bin/redis-server']);
    expect(seen.announced[0]).toBe(`storesync demo: no Redis found; installing the Debian package redis-server (${INSTALL.join(' ')})`);
  });

  it('uses the installed Redis as it is when the package started its service', async () => {
    const { seen, run } = fakeMachine({ onPath: ['apt-get'], root: true, afterInstall: { answers: true, onPath: ['apt-get', 'redis-server'] } });
    expect(await run()).toMatchObject({ url: URL, origin: 'installed', started: false });
    expect(seen.started).toEqual([]);
  });

  it('installs through passwordless sudo when not root', async () => {
    const { seen, run } = fakeMachine({ onPath: ['apt-get'], sudo: true, afterInstall: { onPath: ['redis-server'] } });
    expect(await run()).toMatchObject({ origin: 'installed' });
    expect(seen.runs).toEqual([['sudo', '-n', ...INSTALL]]);
  });

  it('refreshes the package lists and tries once more when the first install fails', async () => {
    const { seen, run } = fakeMachine({
      onPath: ['apt-get'],
      root: true,
      results: [{ ok: false, output: 'E: Unable to locate package redis-server\n' }, { ok: true, output: '' }, { ok: true, output: '' }],
      afterInstall: { onPath: ['redis-server'] },
    });
    expect(await run()).toMatchObject({ origin: 'installed' });
    expect(seen.runs).toEqual([INSTALL, UPDATE, INSTALL]);
  });

  it('gives up in one line with apt-get’s last word when the lists cannot be refreshed', async () => {
    const { message, seen } = await failure({
      onPath: ['apt-get'],
      root: true,
      results: [{ ok: false, output: 'E: Unable to locate package redis-server\n' }, { ok: false, output: 'W: Some index files failed to download\n' }],
    });
    expect(seen.runs).toEqual([INSTALL, UPDATE]);
    expect(message).toContain('apt-get update failed: W: Some index files failed to download');
  });

  it('gives up in one line with apt-get’s last word when the install fails again after refreshing', async () => {
    const { message, seen } = await failure({
      onPath: ['apt-get'],
      root: true,
      results: [{ ok: false, output: 'E: broken\n' }, { ok: true, output: '' }, { ok: false, output: 'E: Unable to locate package redis-server\n' }],
    });
    expect(seen.runs).toEqual([INSTALL, UPDATE, INSTALL]);
    expect(message).toContain('apt-get install redis-server failed: E: Unable to locate package redis-server');
  });

  it('gives up in one line, installing nothing, when neither root nor passwordless sudo', async () => {
    const { message, seen } = await failure({ onPath: ['apt-get'], root: false, sudo: false });
    expect(seen.runs).toEqual([]);
    expect(seen.sudoAsked).toBe(1);
    expect(message).toContain('installing it needs root or passwordless sudo');
  });

  it('gives up in one line where there is no apt-get (not Debian/Ubuntu), even as root', async () => {
    const { message, seen } = await failure({ root: true });
    expect(seen.runs).toEqual([]);
    expect(message).toContain('apt-get is not available');
    expect(message).toContain('brew install redis');
  });

  it('gives up in one line when the install succeeded but no server can be found', async () => {
    const { message } = await failure({ onPath: ['apt-get'], root: true });
    expect(message).toContain('installed but is still not on the PATH');
  });
});

describe('the demo Redis on this machine', () => {
  it('starts a private redis-server from the PATH when nothing answers at the URL, and stops it', async () => {
    const url = `redis://127.0.0.1:${await sparePort()}/0`;
    const announced: string[] = [];
    const redis = await ensureRedis({ url, announce: (line) => announced.push(line) }, systemProbes({ PATH: process.env.PATH ?? '' }));
    try {
      expect(redis).toMatchObject({ origin: 'started', started: true });
      expect(redis.url).not.toBe(url);
      expect(await redisAnswers(redis.url)).toBe(true);
      expect(announced).toHaveLength(1);
    } finally {
      await redis.stop();
    }
    expect(await redisAnswers(redis.url)).toBe(false);
  });

  it('finds a server program on the PATH of the environment it is given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'storesync-path-'));
    try {
      await writeFile(join(dir, 'valkey-server'), '#!/bin/sh\n');
      await chmod(join(dir, 'valkey-server'), 0o755);
      await writeFile(join(dir, 'redis-server'), 'not executable');
      expect(systemProbes({ PATH: dir }).which(SERVER_PROGRAMS)).toBe(join(dir, 'valkey-server'));
      expect(systemProbes({ PATH: '/nonexistent' }).which(SERVER_PROGRAMS)).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
