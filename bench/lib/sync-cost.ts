/**
 * What a sync costs the daemon processes: from the insert of ERP rows to the store's last write, their
 * CPU time (/proc), the Redis commands (`INFO commandstats`, so commands run inside Lua scripts count)
 * and redis-server's CPU time, each per store write, beside the writes themselves.
 */
import type { BenchEnvironment } from './environment.js';
import { commandDelta } from './redis-server.js';
import type { Write } from './simulator-process.js';
import { rate, round } from './stats.js';
import { spanMs, type WriteLog } from './write-log.js';

/** A sync's rate and cost per store write. */
export interface SyncCost {
  /** Store writes per second, from the first write to the last. */
  perS: number;
  cpuMsPerItem: number;
  redisPerItem: number;
  redisCpuMsPerItem: number;
  /** The ten most called Redis commands, calls per write. */
  top: Record<string, number>;
  /** The writes that came (fewer than expected on a time-out). */
  writes: Write[];
}

/**
 * Marks the write log, runs `insert`, waits for `count` store writes (at most `timeoutMs`) and reads what
 * the `daemons` and redis-server spent meanwhile. A shortfall is not thrown: the caller checks `writes`.
 */
export async function measureSync(
  env: BenchEnvironment,
  log: WriteLog,
  daemons: ReadonlyArray<{ cpuMs(): number }>,
  insert: () => Promise<void>,
  count: number,
  timeoutMs = 600_000,
): Promise<SyncCost> {
  await log.mark();
  const cpuBefore = daemons.map((d) => d.cpuMs());
  const calls = await env.redis.commandCalls();
  const redisCpu = await env.redis.cpuMs();
  await insert();
  const writes = await log.collect(count, timeoutMs);
  const cpuMs = daemons.reduce((sum, d, i) => sum + d.cpuMs() - (cpuBefore[i] ?? 0), 0);
  const redisCpuMs = (await env.redis.cpuMs()) - redisCpu;
  const delta = commandDelta(calls, await env.redis.commandCalls());
  const n = Math.max(1, Math.min(count, writes.length));
  return {
    perS: rate(n, spanMs(writes, n)),
    cpuMsPerItem: cpuMs / n,
    redisPerItem: delta.total / n,
    redisCpuMsPerItem: redisCpuMs / n,
    top: Object.fromEntries(Object.entries(delta.byCommand).sort((a, b) => b[1] - a[1]).slice(0, 10).map(([c, x]) => [c, round(x / n, 2)])),
    writes,
  };
}
