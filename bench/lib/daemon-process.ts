/**
 * Starts `daemon-child.js` (the inventory flow in its own process) and talks to it over IPC.
 */
import { fileURLToPath } from 'node:url';

import { type Child, startChild } from './child.js';

/** What a poll or reconcile run reports back. */
export interface DaemonRun {
  report: Record<string, unknown>;
  /** From the start of the poll/reconcile until `expect` jobs were done. */
  ms: number;
  /** The poll/reconcile call alone (reading the ERP, merging, queueing). */
  producedMs: number;
  jobs: number;
  outcomes: Record<string, number>;
  /** CPU time (user + system) of the daemon process during the run. */
  cpuMs: number;
  /** Peak RSS of the process so far (since it started, so a run's peak only when it is the highest). */
  maxRssMiB: number;
  /** RSS when the run started: what the process held before it (peak minus this is the run's own share). */
  rssBeforeMiB: number;
}

/** A daemon child. */
export interface DaemonProcess {
  readonly child: Child;
  poll(source: string, expect: number, timeoutMs: number): Promise<DaemonRun>;
  reconcile(expect: number, timeoutMs: number, dryRun?: boolean): Promise<DaemonRun>;
  /** Runs the source's snapshot diff, then waits until `expect` jobs are done. */
  diff(source: string, expect: number, timeoutMs: number): Promise<DaemonRun>;
  /** Waits until `expect` jobs are done since the last poll or reconcile (or since start). */
  wait(expect: number, timeoutMs: number): Promise<{ jobs: number; outcomes: Record<string, number> }>;
  /** Waits until the queue holds no waiting, active or delayed job. */
  drain(timeoutMs: number): Promise<{ jobs: number; outcomes: Record<string, number> }>;
  usage(): Promise<{ cpuUserMs: number; cpuSystemMs: number; maxRssMiB: number; rssMiB: number }>;
  stop(): Promise<void>;
}

/** Starts the inventory flow with `config` (overrides of the defaults) in `role`, and waits until it is up. */
export async function startDaemonProcess(
  config: Record<string, unknown>,
  role: 'all' | 'producer' | 'worker',
  logFile: string,
  execArgv: readonly string[] = [],
): Promise<DaemonProcess> {
  const entry = fileURLToPath(new URL('./daemon-child.js', import.meta.url));
  const child = startChild(process.execPath, [...execArgv, entry], logFile, {
    ipc: true,
    env: { PATH: process.env.PATH ?? '', BENCH_CONFIG: JSON.stringify(config), BENCH_ROLE: role },
  });
  const pending = new Map<number, (message: Record<string, unknown>) => void>();
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.process.on('message', (raw) => {
    const message = raw as Record<string, unknown>;
    if (message.ready) return ready();
    pending.get(message.id as number)?.(message);
  });
  let nextId = 1;
  const ask = (message: object, timeoutMs: number): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`daemon did not answer ${JSON.stringify(message)} within ${timeoutMs} ms (log: ${logFile})`)), timeoutMs);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        pending.delete(id);
        if (typeof answer.error === 'string') reject(new Error(`daemon: ${answer.error}`));
        else resolve(answer);
      });
      child.process.send({ id, ...message });
    });
  await Promise.race([
    isReady,
    child.exited.then((code) => {
      throw new Error(`daemon exited (${code}) before it was ready; see ${logFile}`);
    }),
  ]);
  return {
    child,
    poll: (source, expect, timeoutMs) => ask({ type: 'poll', source, expect }, timeoutMs) as unknown as Promise<DaemonRun>,
    reconcile: (expect, timeoutMs, dryRun = false) => ask({ type: 'reconcile', expect, dryRun }, timeoutMs) as unknown as Promise<DaemonRun>,
    diff: (source, expect, timeoutMs) => ask({ type: 'diff', source, expect }, timeoutMs) as unknown as Promise<DaemonRun>,
    wait: (expect, timeoutMs) => ask({ type: 'wait', expect }, timeoutMs) as never,
    drain: (timeoutMs) => ask({ type: 'drain', timeoutMs }, timeoutMs + 5000) as never,
    usage: () => ask({ type: 'usage' }, 10_000) as never,
    async stop() {
      if (!child.alive()) return;
      await ask({ type: 'stop' }, 15_000).catch(() => {});
      await Promise.race([child.exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      await child.stop(3000);
    },
  };
}
