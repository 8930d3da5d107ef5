/**
 * The daemon side of a benchmark, in its own process: the real inventory flow (producer and worker)
 * with the real store client, Redis and ERP source, driven over IPC so that a benchmark can start a poll
 * or a reconcile at a known instant and read this process's CPU time and memory.
 *
 * Messages in: `{id, type: 'poll', source, expect}` (poll, then wait until `expect` jobs are done),
 * `{id, type: 'diff', source, expect}` (the source's snapshot diff, then the same),
 * `{id, type: 'reconcile', expect, dryRun?}`, `{id, type: 'wait', expect}` (jobs done since the last
 * run), `{id, type: 'drain', timeoutMs}` (until the queue holds no waiting, active or delayed job),
 * `{id, type: 'usage'}`, `{id, type: 'stop'}`.
 * Every answer carries the request's `id`.
 */
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { StoreClient } from '../../src/store/client.js';
import type { Role } from '../../src/sync/flow.js';
import { startInventoryFlow } from '../../src/sync/inventory/index.js';
import { applyMemoryFlags, startedUp } from '../../src/v8-flags.js';

// The V8 flags of the real entry (src/main.ts), so that the benchmark measures the daemon users run
// (set once the modules are loaded here; the entry sets them before).
applyMemoryFlags(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);

type Request =
  | { id: number; type: 'poll'; source: string; expect: number }
  | { id: number; type: 'diff'; source: string; expect: number }
  | { id: number; type: 'reconcile'; expect: number; dryRun?: boolean }
  | { id: number; type: 'wait'; expect: number }
  | { id: number; type: 'drain'; timeoutMs: number }
  | { id: number; type: 'usage' }
  | { id: number; type: 'stop' };

const send = (message: object): void => {
  process.send?.(message);
};

const overrides = JSON.parse(process.env.BENCH_CONFIG ?? '{}') as Record<string, unknown>;
const role = (process.env.BENCH_ROLE ?? 'all') as Role;
const config = loadConfig({ env: {}, overrides });
const logger = createLogger({ level: config.log.level, destination: process.stderr });
const metrics = new Metrics({ defaultMetrics: false });
const store = new StoreClient({ config: config.store, logger, metrics });
const flow = await startInventoryFlow({ config, connect: () => createRedis(config.redis), store, logger, metrics }, { role });
// Started, as the daemon says once it is (daemon.ts): its young generation may grow from now on while it works (v8-flags.ts).
startedUp();

/** Jobs finished (any outcome) since the last reset, and who waits for a count. */
let done = 0;
const outcomes: Record<string, number> = {};
let waiter: { count: number; resolve: () => void } | undefined;
flow.events.on('inventory:job:done', ({ outcome }) => {
  done += 1;
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  if (waiter && done >= waiter.count) waiter.resolve();
});
const reset = (): void => {
  done = 0;
  for (const key of Object.keys(outcomes)) delete outcomes[key];
};
const jobsDone = (count: number): Promise<void> =>
  count <= done ? Promise.resolve() : new Promise((resolve) => (waiter = { count, resolve }));

/** Resolves once the inventory queue has nothing waiting, active, delayed or prioritized. */
async function drain(timeoutMs: number): Promise<void> {
  const queue = flow.queues[0];
  if (!queue) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    if (Object.values(counts).every((n) => n === 0)) return;
    if (Date.now() > deadline) throw new Error(`queue not drained within ${timeoutMs} ms: ${JSON.stringify(counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const usage = (): { cpuUserMs: number; cpuSystemMs: number; maxRssMiB: number; rssMiB: number } => {
  const cpu = process.cpuUsage();
  return {
    cpuUserMs: cpu.user / 1000,
    cpuSystemMs: cpu.system / 1000,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
  };
};

process.on('message', (raw) => {
  const message = raw as Request;
  void (async () => {
    try {
      if (message.type === 'usage') return send({ id: message.id, ...usage() });
      if (message.type === 'stop') {
        await flow.close(5000);
        await store.close();
        send({ id: message.id });
        // A normal exit, so that `--cpu-prof` writes its profile.
        setImmediate(() => process.exit(0));
        return;
      }
      if (message.type === 'wait') {
        await jobsDone(message.expect);
        return send({ id: message.id, jobs: done, outcomes: { ...outcomes } });
      }
      if (message.type === 'drain') {
        await drain(message.timeoutMs);
        return send({ id: message.id, jobs: done, outcomes: { ...outcomes } });
      }
      reset();
      const before = usage();
      const started = performance.now();
      const report =
        message.type === 'poll' ? await flow.poll(message.source) : message.type === 'diff' ? await flow.diff(message.source) : await flow.reconcile({ dryRun: message.dryRun ?? false });
      const producedMs = performance.now() - started;
      await jobsDone(message.expect);
      const ms = performance.now() - started;
      const after = usage();
      send({
        id: message.id,
        report,
        ms,
        producedMs,
        jobs: done,
        outcomes: { ...outcomes },
        cpuMs: after.cpuUserMs + after.cpuSystemMs - before.cpuUserMs - before.cpuSystemMs,
        maxRssMiB: after.maxRssMiB,
        rssBeforeMiB: before.rssMiB,
      });
    } catch (error) {
      send({ id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  })();
});
send({ ready: true });
