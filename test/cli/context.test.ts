import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cliLogLevel } from '../../src/cli/context.js';
import { EXIT } from '../../src/cli/program.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { cli } from '../helpers/cli.js';

let sim: Simulator;
let dir: string;
/** The store's settings, at the default log level (info). */
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, items: 5, sales: 0, users: 0, clients: 0 });
  dir = await mkdtemp(join(tmpdir(), 'storesync-cli-context-'));
  env = { STORE_BASE_URL: sim.url, STORE_USERNAME: 'demo', STORE_PASSWORD: 'demo-password' };
});

afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a quiet CLI', () => {
  it('writes the result on stdout and 0 bytes on stderr at the default log level', async () => {
    const login = await cli(['store', 'login'], env);
    expect(login).toEqual({ code: EXIT.ok, stdout: 'login ok\n', stderr: '' });
    const get = await cli(['store', 'inventory', 'get', '--code', 'SKU-000001', '--json'], env);
    expect(get.code).toBe(EXIT.ok);
    expect(get.stderr).toHaveLength(0);
    expect((JSON.parse(get.stdout) as Array<{ Code: string }>).map((item) => item.Code)).toEqual(['SKU-000001']);
  });

  it('logs what the command does on stderr with --verbose (and with an explicit --log-level)', async () => {
    for (const flags of [['--verbose'], ['-v'], ['--log-level', 'info']]) {
      const run = await cli([...flags, 'store', 'login'], env);
      expect(run.code).toBe(EXIT.ok);
      expect(run.stdout).toBe('login ok\n');
      const lines = run.stderr.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toContainEqual(expect.objectContaining({ level: 'info', component: 'store', msg: 'logged in to the store' }));
    }
  });

  it('still says on stderr what went wrong', async () => {
    const run = await cli(['store', 'login'], { ...env, STORE_PASSWORD: 'wrong-password' });
    expect(run.code).toBe(EXIT.remote);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('storesync: ERR_');
    expect(run.stderr).not.toContain('wrong-password');
  });

  it('keeps a command at warn or above unless asked, and the daemon at log.level', () => {
    expect(cliLogLevel('info', { kind: 'command', verbose: false, explicit: false })).toBe('warn');
    expect(cliLogLevel('error', { kind: 'command', verbose: false, explicit: false })).toBe('error');
    expect(cliLogLevel('info', { kind: 'command', verbose: true, explicit: false })).toBe('info');
    expect(cliLogLevel('debug', { kind: 'command', verbose: true, explicit: false })).toBe('debug');
    expect(cliLogLevel('silent', { kind: 'command', verbose: true, explicit: false })).toBe('info');
    expect(cliLogLevel('debug', { kind: 'command', verbose: false, explicit: true })).toBe('debug');
    expect(cliLogLevel('info', { kind: 'daemon', verbose: false, explicit: false })).toBe('info');
  });
});

describe('the configuration a command needs', () => {
  /** A config naming the admin token and the store password by variable, as a production one does. */
  async function productionConfig(): Promise<string> {
    const drop = join(dir, 'drop');
    const file = join(dir, 'production.yaml');
    await writeFile(
      file,
      [
        'store:',
        '  password: ${STORE_PASSWORD}',
        'admin:',
        '  token: ${ADMIN_TOKEN}',
        'inventory:',
        '  sources:',
        '    - name: erp-csv',
        '      kind: csv',
        `      dir: ${JSON.stringify(drop)}`,
        '      settleMs: 0',
        '      schedule: "0 * * * * *"',
      ].join('\n'),
    );
    await mkdir(drop, { recursive: true });
    await writeFile(join(drop, 'stock.csv'), 'Code,Stock\nSKU-1,4\n');
    return file;
  }

  it('lets sources test run without ADMIN_TOKEN or the store password: it touches neither', async () => {
    const file = await productionConfig();
    const run = await cli(['--config', file, 'sources', 'test', '--json'], {});
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    const [result] = (JSON.parse(run.stdout) as { sources: Array<{ source: string; records: Array<{ fields: Record<string, unknown> }> }> }).sources;
    expect(result?.source).toBe('erp-csv');
    expect(result?.records.map((record) => record.fields)).toEqual([{ Code: 'SKU-1', Stock: 4 }]);
  });

  it('lets a store command run without ADMIN_TOKEN, but not without the store password it uses', async () => {
    const file = await productionConfig();
    const login = await cli(['--config', file, 'store', 'login'], { STORE_BASE_URL: sim.url, STORE_USERNAME: 'demo', STORE_PASSWORD: 'demo-password' });
    expect(login).toEqual({ code: EXIT.ok, stdout: 'login ok\n', stderr: '' });
    const without = await cli(['--config', file, 'store', 'login'], { STORE_BASE_URL: sim.url });
    expect(without.code).toBe(EXIT.config);
    expect(without.stderr).toContain('store.password: ${STORE_PASSWORD} is used but the environment variable STORE_PASSWORD is not set');
    expect(without.stderr).not.toContain('ADMIN_TOKEN');
  });

  it('still checks every variable in config check (what run would load)', async () => {
    const file = await productionConfig();
    const run = await cli(['--config', file, 'config', 'check'], { STORE_PASSWORD: 'x' });
    expect(run.code).toBe(EXIT.config);
    expect(run.stderr).toContain('admin.token: ${ADMIN_TOKEN} is used but the environment variable ADMIN_TOKEN is not set');
  });
});
