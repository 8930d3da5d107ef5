/**
 * What every benchmark runs against, started once per `npm run bench`: a redis-server and a PostgreSQL
 * cluster of the run's own (spare ports, temp folders: command statistics count only our commands),
 * the simulator in a child process, and a builder for daemon configurations.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BenchErp } from './bench-erp.js';
import type { Cleanup } from './cleanup.js';
import { type PgCluster, startPgCluster } from './pg-cluster.js';
import { type RedisServer, startBenchRedis } from './redis-server.js';
import { type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';

/** The store credentials the benchmarks use (a throwaway simulator's). */
export const STORE_USER = 'demo';
/** Its password (a throwaway, known to the benchmark's own simulator only). */
export const STORE_PASSWORD = 'bench-password';

/** The running environment, shared by the benchmarks of one run. */
export interface BenchEnvironment {
  readonly root: string;
  readonly logDir: string;
  readonly redis: RedisServer;
  readonly pg: PgCluster;
  readonly erp: BenchErp;
  readonly sim: SimulatorProcess;
  /** Node options of the daemon processes (`--cpu-prof` when profiling). */
  readonly daemonExecArgv: readonly string[];
  /** A daemon configuration (overrides of the defaults) on a fresh Redis prefix. */
  daemonConfig(overrides?: { concurrency?: number; sources?: unknown[] }): Record<string, unknown>;
}

/** Starts the environment; everything it starts is undone by `cleanup`. */
export async function startEnvironment(
  root: string,
  storeItems: number,
  cleanup: Cleanup,
  log: (line: string) => void,
  profileDir?: string,
  nodeArgs: readonly string[] = [],
): Promise<BenchEnvironment> {
  const logDir = mkdtempSync(join(tmpdir(), 'storesync-bench-'));
  cleanup.defer('log folder', () => rmSync(logDir, { recursive: true, force: true }));
  log(`logs: ${logDir}`);
  const redis = await startBenchRedis({ dir: logDir });
  cleanup.defer('redis-server', () => redis.destroy());
  const pg = await startPgCluster();
  cleanup.defer('postgresql', () => pg.destroy());
  await pg.createDatabase('bench');
  const erp = new BenchErp(pg.url('bench'));
  cleanup.defer('erp pool', () => erp.close());
  await erp.prepare();
  const sim = await startSimulatorProcess({ root, logDir, items: storeItems, password: STORE_PASSWORD });
  cleanup.defer('simulator', () => sim.stop());
  log(`redis ${redis.url}, postgresql ${pg.url('bench')}, simulator ${sim.url} (${storeItems} items)`);
  return {
    root,
    logDir,
    redis,
    pg,
    erp,
    sim,
    daemonExecArgv: [...nodeArgs, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
    daemonConfig({ concurrency = 16, sources = [] } = {}) {
      return {
        store: {
          baseUrl: sim.url,
          username: STORE_USER,
          password: STORE_PASSWORD,
          connections: Math.max(concurrency, 4),
          retry: { attempts: 4, baseDelayMs: 50, maxDelayMs: 1000 },
        },
        redis: { url: redis.url, prefix: `bench-${randomUUID().slice(0, 8)}` },
        log: { level: 'warn' },
        inventory: { concurrency, attempts: 5, backoffMs: 100, sources },
        sales: { enabled: false },
      };
    },
  };
}
