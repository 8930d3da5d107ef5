/**
 * The run's own redis-server (the launcher in src/queue/redis-server.ts) with what the benchmarks read
 * from it: command statistics and CPU time. The chaos run kills and restarts it; neither touches the
 * shared 6379.
 */
import { Redis } from 'ioredis';

import { type RedisServer as OwnRedisServer, type RedisServerOptions, startRedisServer } from '../../src/queue/redis-server.js';

/** A redis-server of the run's own, with its statistics. */
export interface RedisServer extends OwnRedisServer {
  /** Per-command call counts from `INFO commandstats`. */
  commandCalls(): Promise<Map<string, number>>;
  /** CPU time the server has used (user + system), ms. */
  cpuMs(): Promise<number>;
}

/** Starts a redis-server on a spare port (see the launcher's options) and waits until it answers PING. */
export async function startBenchRedis(options: Pick<RedisServerOptions, 'aof' | 'dir'> = {}): Promise<RedisServer> {
  const server = await startRedisServer(options);
  const info = async (section: string): Promise<string> => {
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      return await client.info(section);
    } finally {
      client.disconnect();
    }
  };
  return Object.assign(server, {
    async cpuMs() {
      const text = await info('cpu');
      const seconds = (name: string): number => Number(text.match(new RegExp(`^${name}:([\\d.]+)`, 'm'))?.[1] ?? Number.NaN);
      return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
    },
    async commandCalls() {
      const text = await info('commandstats');
      const calls = new Map<string, number>();
      for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1] as string, Number(match[2]));
      return calls;
    },
  });
}

/** Total calls in `after` minus `before`, leaving out the commands the measurement itself sends. */
export function commandDelta(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): { total: number; byCommand: Record<string, number> } {
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const [command, calls] of after) {
    if (command === 'info') continue;
    const delta = calls - (before.get(command) ?? 0);
    if (delta > 0) {
      byCommand[command] = delta;
      total += delta;
    }
  }
  return { total, byCommand };
}
