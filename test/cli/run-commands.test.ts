import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli } from '../../src/cli/program.js';
import { type Simulator,startSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { cli } from '../helpers/cli.js';
import { testPrefix } from '../ops/helpers.js';
import { deleteKeys } from '../support/redis.js';

const redis = new Redis('redis://127.0.0.1:6379/0');
const prefix = testPrefix();
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});

afterAll(async () => {
  await sim.close();
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

/** Runs `storesync run ...` until `stop` is called; exposes the log lines as they come. */
function runDaemonCli(args: string[]) {
  const controller = new AbortController();
  let stderr = '';
  const env = {
    STORE_BASE_URL: sim.url,
    STORE_USERNAME: 'demo',
    STORE_PASSWORD: 'demo-password',
    REDIS_PREFIX: prefix,
    HTTP_PORT: '0',
    ADMIN_TOKEN: 'cli-test-admin-token-42',
    LOG_LEVEL: 'info',
  };
  const done = runCli(['run', ...args], {
    env,
    stdout: { write: () => undefined },
    stderr: { write: (text: string) => (stderr += text) },
    stopSignal: controller.signal,
  });
  const lines = () =>
    stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { done, lines, stderr: () => stderr, stop: () => controller.abort('SIGTERM') };
}

describe('storesync run', () => {
  it('runs the daemon until the stop signal, then shuts down and exits 0', async () => {
    const run = runDaemonCli([]);
    const started = await waitFor(() => run.lines().find((line) => line.msg === 'storesync started'), { message: 'the start line' });
    expect(started).toMatchObject({ role: 'all' });
    expect((await fetch(`${String(started.http)}/livez`)).status).toBe(200);
    run.stop();
    expect(await run.done).toBe(0);
    expect(run.lines().some((line) => line.msg === 'storesync stopped')).toBe(true);
    expect(run.stderr()).not.toContain('demo-password');
    expect(run.stderr()).not.toContain('cli-test-admin-token-42');
  });

  it('refuses to start flows that call the store without its password (exit 78): no login is tried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'storesync-run-'));
    const configFile = join(dir, 'sales.yaml');
    writeFileSync(configFile, `sales:\n  sink: { kind: file, dir: ${JSON.stringify(join(dir, 'sales'))} }\n`);
    const before = sim.counters();
    const result = await cli(['--config', configFile, 'run'], { STORE_BASE_URL: sim.url, STORE_USERNAME: 'demo', REDIS_PREFIX: prefix, HTTP_PORT: '0' });
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('store.password: required, the enabled flows call the store: sales (file sink) (env STORE_PASSWORD)');
    const after = sim.counters();
    expect(after.failedLogins + after.logins).toBe(before.failedLogins + before.logins);
  });

  it('runs the producer role with --role producer', async () => {
    const run = runDaemonCli(['--role', 'producer']);
    const started = await waitFor(() => run.lines().find((line) => line.msg === 'storesync started'), { message: 'the start line' });
    expect(started.role).toBe('producer');
    run.stop();
    expect(await run.done).toBe(0);
  });

  it('refuses an unknown role as a bad option value (exit 3) before starting anything', async () => {
    const result = await cli(['run', '--role', 'everything']);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe('storesync: nothing sent: run options: field --role = "everything" breaks "one of all, producer, worker"\n');
  });

  it('refuses a demo port out of range as a bad option value (exit 3)', async () => {
    const result = await cli(['demo', '--once', '--port', '70000']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('field --port = "70000" breaks "a port number from 0 to 65535"');
  });

  it('lists run and demo in the help', async () => {
    const result = await cli(['--help']);
    expect(result.stdout).toMatch(/run \[options\]/);
    expect(result.stdout).toMatch(/demo \[options\]/);
  });
});
