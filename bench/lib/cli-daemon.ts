/**
 * `storesync run` as users run it: the real CLI in its own process, every flow on, the default settings
 * except what a benchmark names (concurrency, the role). Its CPU time and memory are read from /proc,
 * since the benchmark cannot ask the process itself.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { request } from 'undici';
import { stringify } from 'yaml';

import { sparePort } from '../../src/queue/redis-server.js';
import { waitFor } from '../../src/wait-for.js';
import { type Child, startChild } from './child.js';

/** What a CLI daemon of a benchmark is configured with. */
export interface CliDaemonOptions {
  root: string;
  logDir: string;
  /** File name stem of the config and log files. */
  name: string;
  storeUrl: string;
  storeUser: string;
  storePassword: string;
  redisUrl: string;
  prefix: string;
  erpUrl: string;
  role: 'all' | 'producer' | 'worker';
  concurrency: number;
  /**
   * More `inventory` settings (`sites`, `priceLists`, `sources`: these replace the change log's source).
   * @defaultValue {}
   */
  inventory?: Record<string, unknown>;
  /** Node options (`--cpu-prof` when profiling). */
  execArgv?: readonly string[];
}

/** A running `storesync run` process. */
export interface CliDaemon {
  readonly child: Child;
  /** CPU time (user + system) used so far, ms (/proc/PID/stat, 10 ms resolution). */
  cpuMs(): number;
  /** Resident memory now and at its peak, MiB. */
  memory(): { rssMiB: number; peakRssMiB: number };
  /** SIGTERM (graceful shutdown: a `--cpu-prof` profile is written), SIGKILL after 20 s. */
  stop(): Promise<void>;
}

const TICK_MS = 10;

/** The change log's source as a user would configure it: polled every second, default limit and overlap. */
export function cliSource(erpUrl: string): Record<string, unknown> {
  return {
    name: 'erp',
    kind: 'sql',
    url: erpUrl,
    schedule: '*/1 * * * * *',
    initialCursor: '1970-01-01T00:00:00.000Z',
    changes:
      'SELECT code AS "Code", stock AS "Stock", price AS "Price", changed_at AS cursor FROM changes ' +
      'WHERE changed_at >= :cursor ORDER BY changed_at, code, id LIMIT :limit',
  };
}

/** Starts `storesync run --role …` and waits until its /readyz answers 200. */
export async function startCliDaemon(options: CliDaemonOptions): Promise<CliDaemon> {
  const configFile = join(options.logDir, `${options.name}.yaml`);
  writeFileSync(
    configFile,
    stringify({
      store: { baseUrl: options.storeUrl, username: options.storeUser },
      redis: { url: options.redisUrl, prefix: options.prefix },
      http: { host: '127.0.0.1' },
      inventory: { concurrency: options.concurrency, sources: [cliSource(options.erpUrl)], ...options.inventory },
      // Sales are on (the default) with the default sink kind; only its folder is the run's own.
      sales: { sink: { kind: 'file', dir: join(options.logDir, `${options.name}-sales`) } },
    }),
  );
  const port = await sparePort();
  const child = startChild(
    process.execPath,
    [...(options.execArgv ?? []), join(options.root, 'bin', 'storesync.js'), 'run', '--role', options.role, '--config', configFile],
    join(options.logDir, `${options.name}.log`),
    {
      env: {
        PATH: process.env.PATH ?? '',
        STORE_PASSWORD: options.storePassword,
        ADMIN_TOKEN: 'bench-admin-token-0123456789',
        HTTP_PORT: String(port),
      },
    },
  );
  await waitFor(
    async () => {
      if (!child.alive()) throw new Error(`storesync run exited; see ${child.logFile}`);
      const res = await request(`http://127.0.0.1:${port}/readyz`);
      await res.body.dump();
      return res.statusCode === 200;
    },
    { timeoutMs: 60_000, intervalMs: 100, message: `storesync run (${options.name}) ready` },
  );
  return processHandle(child);
}

/** A child's CPU time and memory, read from /proc (the benchmark cannot ask the process itself). */
export function processHandle(child: Child): CliDaemon {
  const proc = (file: string): string => readFileSync(`/proc/${child.pid}/${file}`, 'utf8');
  return {
    child,
    cpuMs() {
      // Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
      const fields = proc('stat').slice(proc('stat').lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    },
    memory() {
      const status = proc('status');
      const kib = (name: string): number => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, 'm'))?.[1] ?? Number.NaN);
      return { rssMiB: Math.round(kib('VmRSS') / 1024), peakRssMiB: Math.round(kib('VmHWM') / 1024) };
    },
    stop: () => child.stop(20_000),
  };
}
