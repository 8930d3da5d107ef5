import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'storesync-credentials-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 15 and 16 characters: the shortest refused and the shortest accepted. */
const SHORT = 'abcdefghijklmn5';
const LONG_ENOUGH = 'abcdefghijklmn16';

describe('admin.token length', () => {
  it('config check refuses a 15-character ADMIN_TOKEN (exit 78), naming the key and its variable, never the value', async () => {
    expect(SHORT).toHaveLength(15);
    const result = await cli(['config', 'check'], { ADMIN_TOKEN: SHORT });
    expect(result.code).toBe(78);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([
      'storesync: invalid configuration',
      '  admin.token: shorter than 16 characters, too easy to guess; use a random one, e.g. `openssl rand -base64 24` (env ADMIN_TOKEN)',
    ]);
    expect(result.stderr).not.toContain(SHORT);
  });

  it('config check accepts 16 characters, and no token at all (/admin is then refused)', async () => {
    expect(LONG_ENOUGH).toHaveLength(16);
    expect((await cli(['config', 'check'], { ADMIN_TOKEN: LONG_ENOUGH })).code).toBe(0);
    expect((await cli(['config', 'check'])).code).toBe(0);
  });

  it('refuses a short token from the config file too, with the store credentials missing in the same message', async () => {
    const configFile = join(dir, 'short.yaml');
    writeFileSync(configFile, `admin:\n  token: ${SHORT}\ninventory:\n  sources:\n    - { name: drop, kind: csv, schedule: "*/30 * * * * *", dir: /tmp/drop }\n`);
    const result = await cli(['--config', configFile, 'config', 'check'], { STORE_USERNAME: 'shop' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('  store.password: required');
    expect(result.stderr).toContain('  admin.token: shorter than 16 characters');
    expect(result.stderr).not.toContain(SHORT);
  });

  it('run refuses it before starting anything', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const result = await cli(['run'], { ADMIN_TOKEN: SHORT, HTTP_PORT: '0', REDIS_PREFIX: `test-${randomUUID()}`, LOG_LEVEL: 'silent' }, stopped.signal);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('admin.token: shorter than 16 characters');
  });
});
