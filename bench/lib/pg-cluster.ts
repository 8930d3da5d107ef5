/**
 * A PostgreSQL cluster of the run's own (initdb in a temp folder, a spare loopback port), so the chaos
 * run can stop the "ERP database" and bring it back without touching the shared server. PostgreSQL
 * refuses to run as root: when we are root, its commands run as the `postgres` user and the folder is
 * handed to that user.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import pg from 'pg';

import { sparePort } from '../../src/queue/redis-server.js';


const run = promisify(execFile);

/** A PostgreSQL cluster of the run's own. */
export interface PgCluster {
  readonly port: number;
  readonly dir: string;
  /** Connection URL of `database` (user postgres, trust authentication). */
  url(database?: string): string;
  /** Creates a database. */
  createDatabase(name: string): Promise<void>;
  /** Fast shutdown: open connections are cut, as when an ERP server goes down. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster at once and removes its folder. */
  destroy(): Promise<void>;
}

/** The folder of the newest installed PostgreSQL's binaries (Debian layout), or '' to use PATH. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return '';
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? '' : join(root, versions[0], 'bin');
}

async function postgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
    throw new Error('running as root needs a "postgres" system user to run PostgreSQL (apt-get install postgresql creates it)');
  });
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(stdout.trim()), gid: Number(gid.trim()) };
}

/** Runs initdb and starts the cluster on a spare port. */
export async function startPgCluster(): Promise<PgCluster> {
  const bin = binDir();
  const tool = (name: string): string => (bin ? join(bin, name) : name);
  const owner = await postgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'storesync-pg-'));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const port = await sparePort();
  const asOwner = (command: string, args: string[]): Promise<unknown> =>
    owner ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);

  await asOwner(tool('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  // Durability settings off: this cluster is scratch, and the runs measure storesync, not fsync.
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = async (): Promise<void> => {
    await asOwner(tool('pg_ctl'), ['-D', data, '-l', join(dir, 'postgres.log'), '-o', serverOptions, '-w', '-t', '60', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate'): Promise<void> => {
    if (!existsSync(join(data, 'postmaster.pid'))) return;
    await asOwner(tool('pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  };
  await start();

  const url = (database = 'postgres'): string => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    dir,
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
    },
    stop: () => stop('fast'),
    start,
    async destroy() {
      await stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
