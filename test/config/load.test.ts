import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { ENV_KEYS, loadConfig } from '../../src/config/load.js';
import { DEFAULT_STATUS_TEXTS } from '../../src/config/schema.js';
import { summarizeConfig } from '../../src/config/summary.js';
import type { ConfigError } from '../../src/errors.js';
import { redactText } from '../../src/secrets.js';
import { configErrorOf } from '../support/config-error.js';

const dir = mkdtempSync(join(tmpdir(), 'storesync-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function problemsOf(fn: () => unknown): readonly string[] {
  return configErrorOf(fn).problems;
}

describe('loadConfig', () => {
  it('yields every default from config/default.yaml with an empty environment', () => {
    const config = loadConfig({ env: {} });
    expect(config.store.baseUrl).toBe('http://127.0.0.1:8080');
    expect(config.store.timeZone).toBe('America/Argentina/Buenos_Aires');
    expect(config.redis.url).toBe('redis://127.0.0.1:6379/0');
    expect(config.http).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(config.inventory.concurrency).toBe(16);
    expect(config.sales.pull.statuses).toEqual([1]);
    expect(config.sales.ack).toMatchObject({ status: 2, observations: 'ERP order {erpRef}' });
    expect(config.store.statusTexts['2']).toBe('In process');
  });

  it('layers the config file over the defaults and environment variables over the file', () => {
    const configFile = file('layer.yaml', 'store:\n  baseUrl: http://file.example:1\n  username: from-file\nlog:\n  level: debug\n');
    const config = loadConfig({ env: { STORE_USERNAME: 'from-env', REDIS_URL: 'redis://10.0.0.1:6380/2' }, configFile });
    expect(config.store.baseUrl).toBe('http://file.example:1');
    expect(config.store.username).toBe('from-env');
    expect(config.log.level).toBe('debug');
    expect(config.redis.url).toBe('redis://10.0.0.1:6380/2');
  });

  it('takes the config file from STORESYNC_CONFIG when no --config is given', () => {
    const configFile = file('env-named.yaml', 'http:\n  port: 9999\n');
    expect(loadConfig({ env: { STORESYNC_CONFIG: configFile } }).http.port).toBe(9999);
  });

  it('maps each documented environment variable to its key', () => {
    const config = loadConfig({
      env: {
        STORE_BASE_URL: 'http://store.example',
        STORE_USERNAME: 'u',
        STORE_PASSWORD: 'p4ssw0rd',
        STORE_SITE_ID: '3',
        REDIS_URL: 'redis://127.0.0.1:6379/5',
        LOG_LEVEL: 'warn',
        HTTP_HOST: '0.0.0.0',
        HTTP_PORT: '8000',
        ADMIN_TOKEN: 'tok-123456',
      },
    });
    expect(config.store).toMatchObject({ baseUrl: 'http://store.example', username: 'u', password: 'p4ssw0rd', siteId: 3 });
    expect(config.redis.url).toBe('redis://127.0.0.1:6379/5');
    expect(config.log.level).toBe('warn');
    expect(config.http).toEqual({ host: '0.0.0.0', port: 8000 });
    expect(config.admin.token).toBe('tok-123456');
  });

  it('replaces ${NAME} in YAML values from the environment', () => {
    const configFile = file('subst.yaml', 'store:\n  baseUrl: "http://${STORE_HOST}:8080"\n');
    expect(loadConfig({ env: { STORE_HOST: 'shop.local' }, configFile }).store.baseUrl).toBe('http://shop.local:8080');
  });

  it('reports a ${NAME} whose variable is unset, naming the key', () => {
    const configFile = file('subst-missing.yaml', 'store:\n  username: "${NOPE_NOT_SET}"\n');
    expect(problemsOf(() => loadConfig({ env: {}, configFile }))).toEqual([
      'store.username: ${NOPE_NOT_SET} is used but the environment variable NOPE_NOT_SET is not set',
    ]);
  });

  it('reads a secret from a NAME_FILE variable and registers it for redaction', () => {
    const secretFile = file('store_password', 'from-a-docker-secret\n');
    const config = loadConfig({ env: { STORE_PASSWORD_FILE: secretFile } });
    expect(config.store.password).toBe('from-a-docker-secret');
    expect(redactText('login with from-a-docker-secret failed')).toBe('login with [redacted] failed');
  });

  it('lists every problem at once, one line each naming key, value and expectation', () => {
    const configFile = file('bad.yaml', 'store:\n  baseUrl: not a url\n  connections: -2\nlog:\n  level: loud\n');
    const problems = problemsOf(() => loadConfig({ env: { STORE_SITE_ID: 'abc', HTTP_PORT: '99999' }, configFile }));
    expect(problems).toHaveLength(5);
    expect(problems).toContain('STORE_SITE_ID (store.siteId): "abc" is not a whole number');
    expect(problems.find((p) => p.startsWith('store.baseUrl: "not a url"'))).toBeDefined();
    expect(problems.find((p) => p.startsWith('store.connections: -2 — expected'))).toBeDefined();
    expect(problems.find((p) => p.startsWith('log.level: "loud" — expected'))).toBeDefined();
    expect(problems.find((p) => p.startsWith('HTTP_PORT (http.port): 99999 — expected'))).toBeDefined();
  });

  it('names the environment variable whose value breaks a rule, as it does for STORE_SITE_ID (issue 28, 7)', () => {
    const configFile = file('fine.yaml', 'redis:\n  url: redis://127.0.0.1:6379/0\nlog:\n  level: info\n');
    const problems = problemsOf(() => loadConfig({ env: { REDIS_URL: 'localhost:6379', LOG_LEVEL: 'verbose' }, configFile }));
    expect(problems).toHaveLength(2);
    expect(problems.find((p) => p.startsWith('REDIS_URL (redis.url): "localhost:6379" — expected')), problems.join('\n')).toBeDefined();
    expect(problems.find((p) => p.startsWith('LOG_LEVEL (log.level): "verbose" — expected')), problems.join('\n')).toBeDefined();
  });

  it('names the key alone when the file set the bad value and the variable is unset or empty', () => {
    const configFile = file('bad-level.yaml', 'log:\n  level: verbose\n');
    expect(problemsOf(() => loadConfig({ env: { LOG_LEVEL: '' }, configFile }))).toEqual([expect.stringMatching(/^log\.level: "verbose" — expected/)]);
  });

  it('names NAME_FILE when the bad value was read from that file', () => {
    const levelFile = file('log_level', 'verbose\n');
    expect(problemsOf(() => loadConfig({ env: { LOG_LEVEL_FILE: levelFile } }))).toEqual([expect.stringMatching(/^LOG_LEVEL_FILE \(log\.level\): "verbose" — expected/)]);
  });

  it('names the key alone when an override (--option) set the bad value, though its variable is set too', () => {
    const problems = problemsOf(() => loadConfig({ env: { LOG_LEVEL: 'info' }, overrides: { log: { level: 'verbose' } } }));
    expect(problems).toEqual([expect.stringMatching(/^log\.level: "verbose" — expected/)]);
  });

  it('never shows a secret value in a problem line', () => {
    const configFile = file('bad-secret.yaml', 'store:\n  password: 12345\n');
    const [problem] = problemsOf(() => loadConfig({ env: {}, configFile }));
    expect(problem).toBe('store.password: [redacted] — expected string, received number');
  });

  it('names a file that is not valid YAML', () => {
    const configFile = file('broken.yaml', 'store: [unclosed\n');
    expect(problemsOf(() => loadConfig({ env: {}, configFile }))[0]).toMatch(/broken\.yaml: not valid YAML/);
  });

  it('returns a frozen object', () => {
    const config = loadConfig({ env: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.store.retry)).toBe(true);
  });

  it('starts with sales sync off: no sink is configured by default', () => {
    const config = loadConfig({ env: {} });
    expect(config.sales.sink).toBeNull();
    expect(summarizeConfig(config)).toBe('inventory: no sources; sales: off — no sink configured; fulfillment: no sources');
  });
});

describe('loadConfig: unknown keys', () => {
  it('names a mistyped top-level key and the known key it is closest to', () => {
    const configFile = file('typo-top.yaml', 'inventroy:\n  sources: []\n');
    expect(problemsOf(() => loadConfig({ env: {}, configFile }))).toEqual(['inventroy: unknown key (did you mean "inventory"?)']);
  });

  it('names a mistyped nested key with its full path', () => {
    const configFile = file('typo-nested.yaml', 'store:\n  usernme: shop\n  retry:\n    atempts: 3\n');
    expect([...problemsOf(() => loadConfig({ env: {}, configFile }))].sort()).toEqual([
      'store.retry.atempts: unknown key (did you mean "attempts"?)',
      'store.usernme: unknown key (did you mean "username"?)',
    ]);
  });

  it('checks the keys of a source against its own kind, in every array element', () => {
    const configFile = file(
      'typo-source.yaml',
      [
        'inventory:',
        '  sources:',
        '    - { name: a, kind: csv, schedule: "* * * * *", dir: /tmp/a }',
        '    - { name: b, kind: csv, schedule: "* * * * *", dir: /tmp/b, snapshotFle: /tmp/all.csv }',
        '    - { name: c, kind: sql, schedule: "* * * * *", url: "postgres://x/y", changes: "select 1", dir: /tmp/c }',
        'fulfillment:',
        '  sources:',
        '    - { name: d, kind: http, schedule: "* * * * *", url: "http://erp.example/", recordPath: items }',
      ].join('\n'),
    );
    expect(problemsOf(() => loadConfig({ env: {}, configFile }))).toEqual([
      'inventory.sources[1].snapshotFle: unknown key (did you mean "snapshotFile"?)',
      'inventory.sources[2].dir: unknown key',
      'fulfillment.sources[0].recordPath: unknown key (did you mean "recordsPath"?)',
    ]);
  });

  it('checks the keys of the sales sink for its kind, and a sink changing kind drops the old kind\'s keys', () => {
    const first = file('sink-file.yaml', 'sales:\n  sink: { kind: file, dir: /tmp/out }\n');
    const second = { sales: { sink: { kind: 'http', url: 'http://erp.example/sales', timeoutMS: 5 } } };
    expect(problemsOf(() => loadConfig({ env: {}, configFile: first, overrides: second }))).toEqual([
      'sales.sink.timeoutMS: unknown key (did you mean "timeoutMs"?)',
    ]);
    const config = loadConfig({ env: {}, configFile: first, overrides: { sales: { sink: { kind: 'http', url: 'http://erp.example/sales' } } } });
    expect(config.sales.sink).toMatchObject({ kind: 'http', url: 'http://erp.example/sales' });
  });

  it('leaves the free-form maps alone (mapping, headers)', () => {
    const configFile = file(
      'maps.yaml',
      'inventory:\n  sources:\n    - { name: a, kind: csv, schedule: "* * * * *", dir: /tmp/a, mapping: { cod_art: Code, whatever: Stock } }\n',
    );
    expect(loadConfig({ env: {}, configFile }).inventory.sources[0]?.mapping).toEqual({ cod_art: 'Code', whatever: 'Stock' });
  });

  it('suggests nothing for a key far from every known one', () => {
    const configFile = file('far.yaml', 'store:\n  colour: blue\n');
    expect(problemsOf(() => loadConfig({ env: {}, configFile }))).toEqual(['store.colour: unknown key']);
  });

  it('lists unknown keys together with the other problems', () => {
    const configFile = file('mixed.yaml', 'store:\n  connections: 0\n  conections: 4\n');
    const problems = problemsOf(() => loadConfig({ env: {}, configFile }));
    expect(problems).toContain('store.conections: unknown key (did you mean "connections"?)');
    expect(problems.find((p) => p.startsWith('store.connections: 0 — expected'))).toBeDefined();
  });

  it('names the environment variable of an override that maps to an unknown key', () => {
    const envKeys = { ...ENV_KEYS, SHOP_USER: { path: 'store.usernme', type: 'string' as const } };
    expect(problemsOf(() => loadConfig({ env: { SHOP_USER: 'shop' }, envKeys }))).toEqual([
      'SHOP_USER (store.usernme): unknown key (did you mean "username"?)',
    ]);
  });

  it('names the variable whose key lies under an unknown key (the unknown key is its first unknown part)', () => {
    const envKeys = { ...ENV_KEYS, SHOP_USER: { path: 'shopp.username', type: 'string' as const } };
    expect(problemsOf(() => loadConfig({ env: { SHOP_USER: 'shop' }, envKeys }))).toEqual([expect.stringMatching(/^SHOP_USER \(shopp\): unknown key/)]);
  });

  it('maps every documented environment variable to a key the schema knows', () => {
    const env = Object.fromEntries(Object.entries(ENV_KEYS).map(([name, { type }]) => [name, type === 'int' ? '1' : 'x']));
    const problems = (() => {
      try {
        loadConfig({ env });
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    })();
    expect(problems.filter((p) => p.includes('unknown key'))).toEqual([]);
  });

  it('loads every shipped configuration (default, config/examples, the demo) without an unknown key', () => {
    const env = { ERP_API_TOKEN: 'token', STORESYNC_DEMO_DIR: dir };
    for (const configFile of ['config/examples/csv-source.yaml', 'config/examples/sql-source.yaml', 'config/examples/http-source.yaml', 'examples/demo/config.yaml']) {
      expect(() => loadConfig({ env, configFile }), configFile).not.toThrow();
    }
  });
});

describe('store.statusTexts', () => {
  it("defaults to the spec's States table", () => {
    const texts = loadConfig({ env: {} }).store.statusTexts;
    // config/default.yaml and the schema's defaults agree, and hold the spec's table.
    expect(texts).toEqual(DEFAULT_STATUS_TEXTS);
    expect(Object.entries(texts).map(([status, text]) => `${status} ${text}`).sort()).toEqual(
      ['-1 Rejected', '-2 Cancelled', '0 Pending', '1 Confirmed', '2 In process', '3 Completed', '6 Delivered'],
    );
  });

  it('adds the entries of a config file to the defaults, or replaces the text of a status', () => {
    const config = loadConfig({ env: {}, configFile: file('status-texts.yaml', 'store:\n  statusTexts:\n    7: Retirado en sucursal\n    -2: Cancelada\n') });
    expect(config.store.statusTexts).toMatchObject({ '7': 'Retirado en sucursal', '-2': 'Cancelada', '3': 'Completed' });
  });

  it('refuses a key that is not a status and an empty text', () => {
    const problems = problemsOf(() => loadConfig({ env: {}, overrides: { store: { statusTexts: { shipped: 'Shipped', 4: ' ' } } } }));
    expect(problems.join('\n')).toMatch(/store\.statusTexts\.shipped.*a sale status \(an integer\) as key/);
    expect(problems.join('\n')).toMatch(/store\.statusTexts\.4.*a non-empty text/);
  });

  it('refuses a status storesync may write without a text: an extra fulfillment status, the ack status', () => {
    const problems = problemsOf(() => loadConfig({ env: {}, overrides: { fulfillment: { statuses: [1, 3, 7] }, sales: { ack: { status: 5 } } } }));
    expect(problems).toContainEqual(expect.stringMatching(/^fulfillment\.statuses\[2\].*status 7 has no text: add it to store\.statusTexts/));
    expect(problems).toContainEqual(expect.stringMatching(/^sales\.ack\.status.*status 5 has no text/));
    // An explicit ack text is enough for the ack status.
    expect(loadConfig({ env: {}, overrides: { sales: { ack: { status: 5, statusText: 'Tomada' } } } }).sales.ack.statusText).toBe('Tomada');
  });
});
