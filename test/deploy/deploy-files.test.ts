import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

import { loadConfig, packageRoot } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { Readiness } from '../../src/ops/health.js';
import { type HttpServer, startHttpServer } from '../../src/ops/http-server.js';
import { sparePort } from '../../src/queue/redis-server.js';
import { StoreClient } from '../../src/store/client.js';
import { promtool, testConfig } from '../ops/helpers.js';

const root = packageRoot();
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/** Every metric name the registry exposes, with the series names of histograms. */
function exposedNames(metrics: Metrics): Set<string> {
  const names = new Set<string>(['up']);
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    names.add(name);
    if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** Metric names used in a PromQL expression (identifiers followed by a selector, a range or an operator). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b(storesync_[a-z0-9_]+|up)\b/g)].map((match) => match[1] as string);
}

function run(file: string, args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

describe('Prometheus and Grafana files', () => {
  const metrics = new Metrics();
  const names = exposedNames(metrics);

  it('has alert rules that promtool accepts', async () => {
    const result = await promtool(['check', 'rules', join(root, 'deploy/alerts.yml')]);
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  it('fires its alerts when it should and clears them after (promtool rule tests: vanished SKUs and orphans held, credentials refused, Redis down, gauges stale)', async () => {
    const result = await promtool(['test', 'rules', join(root, 'test/deploy/alerts.promtool.yml')]);
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  it('has a Prometheus config that promtool accepts, with its rule file found', async () => {
    const result = await promtool(['check', 'config', join(root, 'deploy/prometheus.yml')]);
    expect(result.stdout + result.stderr).toContain('1 rule files found');
    expect(result.code).toBe(0);
  });

  it('alerts only on metrics that storesync exports, covering staleness, failures, backlog, logins, refused credentials, waiting sales and unbooked reservations', () => {
    const groups = (parseYaml(read('deploy/alerts.yml')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }).groups;
    const rules = groups.flatMap((group) => group.rules);
    for (const rule of rules) {
      for (const name of metricNames(rule.expr)) expect(names, `${rule.alert} uses ${name}`).toContain(name);
    }
    const exprs = rules.map((rule) => rule.expr).join('\n');
    for (const needed of [
      'storesync_last_success_timestamp_seconds',
      'storesync_jobs_total',
      'deriv(sum by (queue) (storesync_queue_jobs{state=~"waiting|prioritized"})[15m:1m]) > 0',
      'storesync_store_logins_total{outcome="failure"}',
      'increase(storesync_store_auth_failures_total[10m]) > 0',
      'storesync_sales_oldest_unacknowledged_age_seconds',
      'storesync_reservation_oldest_age_seconds > 86400',
      'max(storesync_reconcile_orphans{state="held"}) > 0',
      'max by (source) (storesync_vanished_held) > 0',
      'storesync_redis_gauges_age_seconds > 300 and storesync_redis_up == 1',
    ]) {
      expect(exprs).toContain(needed);
    }
  });

  it('builds the Grafana dashboard only from exported metrics and the provisioned datasource', () => {
    const dashboard = JSON.parse(read('deploy/grafana/dashboard.json')) as {
      panels: Array<{ title: string; datasource: { uid: string }; targets: Array<{ expr: string }> }>;
    };
    const datasource = parseYaml(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as { datasources: Array<{ uid: string }> };
    const uid = datasource.datasources[0]?.uid;
    expect(dashboard.panels.length).toBeGreaterThan(5);
    for (const panel of dashboard.panels) {
      expect(panel.datasource.uid, panel.title).toBe(uid);
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets) {
        for (const name of metricNames(target.expr)) expect(names, `${panel.title} uses ${name}`).toContain(name);
      }
    }
    const provider = parseYaml(read('deploy/grafana/provisioning/dashboards/storesync.yml')) as { providers: Array<{ options: { path: string } }> };
    expect(provider.providers[0]?.options.path).toBe('/var/lib/grafana/dashboards');
  });
});

describe('Dockerfile and compose file', () => {
  const dockerfile = read('Dockerfile');
  const ignored = read('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it('copies only files that exist and that .dockerignore lets through', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => (match[1] as string).split(/\s+/));
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) {
      expect(existsSync(join(root, source)), `COPY ${source}`).toBe(true);
      const blocked = ignored.find((pattern) => pattern === source || source.startsWith(`${pattern}/`) || new RegExp(`^${pattern.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`).test(source));
      expect(blocked, `COPY ${source} is excluded by .dockerignore`).toBeUndefined();
    }
  });

  it('builds with the dev dependencies, then runs only production ones as a non-root user under an init, with a node healthcheck', () => {
    expect(dockerfile).toMatch(/^FROM node:24-bookworm-slim AS build$/m);
    expect(dockerfile).toMatch(/^FROM node:24-bookworm-slim AS runtime$/m);
    expect(dockerfile).toContain('npm ci --omit=dev');
    expect(dockerfile).toContain('COPY --from=build /app/dist ./dist');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/apt-get install .*tini/);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "bin\/storesync\.js"\]$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "deploy\/healthcheck\.js"\]$/m);
    // The entry must exist where the image puts it.
    expect(read('package.json')).toContain('"storesync": "bin/storesync.js"');
  });

  it('wires Redis with AOF and noeviction, the storesync service, Prometheus, Grafana and a demo profile', () => {
    type Service = { image?: string; command?: string[]; volumes?: string[]; profiles?: string[]; environment?: Record<string, string> };
    const compose = parseYaml(read('docker-compose.yml')) as { services: Record<string, Service> };
    const { services } = compose;
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['redis', 'storesync', 'prometheus', 'grafana', 'simulator', 'erp-db']));
    expect(services.redis?.command).toEqual(expect.arrayContaining(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']));
    expect(services.storesync?.environment?.REDIS_URL).toBe('redis://redis:6379/0');
    expect(services.simulator?.command).toEqual(['simulator', '--port', '8080', '--host', '0.0.0.0']);
    expect(services.simulator?.profiles).toEqual(['demo']);
    expect(services['erp-db']?.profiles).toEqual(['demo']);
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const host = volume.split(':')[0] as string;
        const path = host.replace(/^\$\{[A-Z_]+:-(.+)\}$/, '$1');
        if (path.startsWith('./')) expect(existsSync(join(root, path)), `${name} mounts ${path}`).toBe(true);
      }
    }
    const mounts = (services.prometheus?.volumes ?? []).join(' ');
    expect(mounts).toContain('./deploy/prometheus.yml:');
    expect(mounts).toContain('./deploy/alerts.yml:');
  });

  it('ships a demo compose config that the config schema accepts', () => {
    const config = loadConfig({ env: {}, configFile: join(root, 'examples/demo/compose.yaml') });
    expect(config.store.baseUrl).toBe('http://simulator:8080');
    expect(config.inventory.sources[0]?.kind).toBe('sql');
  });
});

describe('systemd unit', () => {
  const unit = read('deploy/storesync.service');

  it('restarts on failure, reads secrets from /etc/storesync/env and runs as a non-root user', () => {
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^EnvironmentFile=\/etc\/storesync\/env$/m);
    const user = /^User=(.+)$/m.exec(unit)?.[1];
    expect(user).toBeDefined();
    expect(user).not.toBe('root');
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node \/opt\/storesync\/bin\/storesync\.js run$/m);
    expect(unit).toMatch(/^RestartPreventExitStatus=78$/m);
  });
});

describe('the memory environment of the Docker image and the systemd unit', () => {
  /** `NAME=value` pairs of the Dockerfile's ENV instruction (backslash-continued lines). */
  function dockerEnv(): Map<string, string> {
    const instruction = /^ENV ((?:.*\\\n)*.*)$/m.exec(read('Dockerfile'))?.[1] ?? '';
    return new Map([...instruction.matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]));
  }
  function unitEnv(): Map<string, string> {
    return new Map([...read('deploy/storesync.service').matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map((m) => [m[1] as string, m[2] as string]));
  }
  /** How many threads a node process started with `env` has after 300 ms (exit code 9 if node refuses `NODE_OPTIONS`). */
  async function threads(env: Record<string, string>): Promise<number> {
    const script = "setTimeout(() => console.log(require('node:fs').readdirSync('/proc/self/task').length), 300)";
    const { code, output } = await run(process.execPath, ['-e', script], env);
    expect(code, output).toBe(0);
    return Number(output.trim());
  }

  it('set the same malloc arenas and V8 helper threads, and node accepts the options and runs fewer threads', async () => {
    const docker = dockerEnv();
    const unit = unitEnv();
    for (const name of ['MALLOC_ARENA_MAX', 'NODE_OPTIONS']) expect(unit.get(name), name).toBe(docker.get(name));
    expect(docker.get('MALLOC_ARENA_MAX')).toBe('2');
    expect(docker.get('NODE_OPTIONS')).toBe('--v8-pool-size=1');
    // Node refuses an option NODE_OPTIONS may not carry (exit code 9): this one starts, with fewer threads.
    const fewer = await threads({ NODE_OPTIONS: docker.get('NODE_OPTIONS') ?? '' });
    const usual = await threads({});
    expect(fewer).toBeGreaterThan(0);
    expect(fewer).toBeLessThan(usual);
  });
});

describe('deploy/healthcheck.js', () => {
  const redis = new Redis('redis://127.0.0.1:6379/0', { lazyConnect: true });
  let server: HttpServer;
  let store: StoreClient;

  beforeAll(async () => {
    const config = testConfig({ store: { baseUrl: `http://127.0.0.1:${await sparePort()}` } });
    store = new StoreClient({ config: config.store, logger: silentLogger() });
    server = await startHttpServer({
      config,
      logger: silentLogger(),
      metrics: new Metrics({ defaultMetrics: false }),
      readiness: new Readiness({ redis, store }),
      queues: [],
      control: { queueName: 'control', enqueue: async () => 'unused' },
    });
  });

  afterAll(async () => {
    await server.close();
    await store.close();
    redis.disconnect();
  });

  it('exits 0 when the daemon answers /livez on HTTP_PORT', async () => {
    const port = new URL(server.url).port;
    const result = await run(process.execPath, [join(root, 'deploy/healthcheck.js')], { HTTP_PORT: port });
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it('exits 1 with a message when nothing answers', async () => {
    const result = await run(process.execPath, [join(root, 'deploy/healthcheck.js')], { HTTP_PORT: String(await sparePort()) });
    expect(result.code).toBe(1);
    expect(result.output).toContain('ECONNREFUSED');
  });
});
