import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { BUILD_TIMEOUT_MS, freshBuild } from '../support/fresh-build.js';

const dir = mkdtempSync(join(tmpdir(), 'storesync-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('storesync CLI', () => {
  it('prints help and exits 0', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: storesync');
    expect(result.stdout).toContain('config');
  });

  it('exits 2 on an unknown command', async () => {
    const result = await cli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown command/);
  });

  it.each([
    [['--log-level', 'loud', 'config', 'check'], '--log-level', 'loud'],
    [['simulator', '--items', 'many'], '--items', 'many'],
    [['run', '--role', 'boss'], '--role', 'boss'],
    [['store', 'sales', 'get', 'abc'], 'ID', 'abc'],
  ])('exits 3 for a bad option value, whatever the command: %j', async (argv, option, value) => {
    const result = await cli(argv);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`field ${option} = "${value}" breaks`);
  });

  it('exits 78 with one line per configuration problem', async () => {
    const result = await cli(['config', 'check'], { STORE_SITE_ID: 'x', REDIS_URL: 'http://nope' });
    expect(result.code).toBe(78);
    expect(result.stderr.trim().split('\n')).toEqual([
      'storesync: invalid configuration',
      '  STORE_SITE_ID (store.siteId): "x" is not a whole number',
      '  REDIS_URL (redis.url): "http://nope" — expected a redis://host:port/db URL',
    ]);
  });

  it('exits 78 naming a mistyped key and the key it is closest to', async () => {
    const configFile = join(dir, 'typo.yaml');
    writeFileSync(configFile, 'inventroy:\n  sources: []\nstore:\n  usernme: shop\n');
    const result = await cli(['--config', configFile, 'config', 'check']);
    expect(result.code).toBe(78);
    expect(result.stderr.trim().split('\n')).toEqual([
      'storesync: invalid configuration',
      '  store.usernme: unknown key (did you mean "username"?)',
      '  inventroy: unknown key (did you mean "inventory"?)',
    ]);
  });

  it('config check says in one line what will run: sales off without a sink', async () => {
    const configFile = join(dir, 'summary.yaml');
    writeFileSync(
      configFile,
      [
        'inventory:',
        '  sources:',
        '    - { name: erp, kind: sql, schedule: "*/30 * * * * *", url: "postgres://erp/db", changes: "select 1" }',
        '    - { name: drop, kind: csv, schedule: "*/30 * * * * *", dir: /tmp/drop }',
        '  reconcile: { schedule: "0 0 3 * * *" }',
        'fulfillment:',
        '  sources:',
        '    - { name: ship, kind: csv, schedule: "*/30 * * * * *", dir: /tmp/ship }',
      ].join('\n'),
    );
    const credentials = { STORE_USERNAME: 'shop', STORE_PASSWORD: 'pw' };
    const result = await cli(['--config', configFile, 'config', 'check'], credentials);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(
      'inventory: 2 sources (sql, csv); reconcile: "0 0 3 * * *"; sales: off — no sink configured; fulfillment: 1 source (csv)',
    );
    writeFileSync(configFile, 'sales:\n  sink: { kind: file, dir: /tmp/sales }\n');
    const withSink = await cli(['--config', configFile, 'config', 'check'], credentials);
    expect(withSink.stdout.split('\n')[0]).toBe(
      'inventory: no sources; sales: file sink, pulled on "0 */2 * * * *", acknowledged as status 2; fulfillment: no sources',
    );
  });

  it('config check refuses flows that call the store without its password (exit 78), naming the key and the flows', async () => {
    const configFile = join(dir, 'no-password.yaml');
    writeFileSync(
      configFile,
      [
        'inventory:',
        '  sources:',
        '    - { name: drop, kind: csv, schedule: "*/30 * * * * *", dir: /tmp/drop }',
        'sales:',
        '  sink: { kind: file, dir: /tmp/sales }',
      ].join('\n'),
    );
    const result = await cli(['--config', configFile, 'config', 'check'], { STORE_USERNAME: 'shop' });
    expect(result.code).toBe(78);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([
      'storesync: invalid configuration',
      '  store.password: required, the enabled flows call the store: inventory (1 source), sales (file sink) (env STORE_PASSWORD)',
    ]);
    const neither = await cli(['--config', configFile, 'config', 'check']);
    expect(neither.code).toBe(78);
    expect(neither.stderr).toContain('  store.username: required');
    expect(neither.stderr).toContain('  store.password: required');
  });

  it('config check accepts empty store credentials when no enabled flow calls the store', async () => {
    const configFile = join(dir, 'idle.yaml');
    writeFileSync(configFile, 'inventory:\n  sources:\n    - { name: off, kind: csv, enabled: false, schedule: "*/30 * * * * *", dir: /tmp/drop }\n');
    const result = await cli(['--config', configFile, 'config', 'check']);
    expect(result.code).toBe(0);
  });

  it('config check prints the effective configuration with secrets masked', async () => {
    const configFile = join(dir, 'c.yaml');
    writeFileSync(configFile, 'store:\n  username: shop\n');
    const result = await cli(['--config', configFile, 'config', 'check', '--json'], {
      STORE_PASSWORD: 'pw-never-shown',
      ADMIN_TOKEN: 'token-never-shown',
    });
    expect(result.code).toBe(0);
    const shown = JSON.parse(result.stdout) as { store: { username: string; password: string }; admin: { token: string } };
    expect(shown.store.username).toBe('shop');
    expect(shown.store.password).toBe('[redacted]');
    expect(shown.admin.token).toBe('[redacted]');
    expect(result.stdout).not.toContain('never-shown');
  });

  it('runs from the built binary, as npx storesync does', { timeout: BUILD_TIMEOUT_MS }, async () => {
    await freshBuild();
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/storesync.js', '--help']);
    expect(stdout).toContain('Usage: storesync');
  });
});
