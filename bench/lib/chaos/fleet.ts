/**
 * The chaos run's daemons: one producer and several workers, each `node bin/storesync.js run` in its
 * own process with its own HTTP port. Workers are killed with SIGKILL at random moments and started
 * again on the same port; the producer runs throughout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { sparePort } from '../../../src/queue/redis-server.js';
import { type Child, startChild } from '../child.js';

/** One daemon process slot: its role, its port and the process now in it. */
interface Slot {
  name: string;
  role: 'producer' | 'worker';
  port: number;
  child: Child | undefined;
  starts: number;
  /** Set while we kill or stop the process, so its exit is not taken for a crash. */
  ending: boolean;
}

/** How the daemons are started. */
export interface FleetOptions {
  root: string;
  configFile: string;
  logDir: string;
  workers: number;
  /** Environment of every daemon (secrets go here). */
  env: Record<string, string>;
}

/** The producer and the workers. */
export class Fleet {
  private readonly slots: Slot[] = [];
  kills = 0;
  /** Exits we did not cause (a daemon that crashed or gave up by itself). */
  readonly crashes: string[] = [];

  constructor(private readonly options: FleetOptions) {}

  /** Starts the producer and the workers. */
  async start(): Promise<void> {
    const slots: Array<Pick<Slot, 'name' | 'role'>> = [
      { name: 'producer', role: 'producer' },
      ...Array.from({ length: this.options.workers }, (_, i) => ({ name: `worker-${i + 1}`, role: 'worker' as const })),
    ];
    for (const slot of slots) this.slots.push({ ...slot, port: await sparePort(), child: undefined, starts: 0, ending: false });
    for (const slot of this.slots) this.launch(slot);
  }

  /** The producer's HTTP base URL (its /metrics counts the rejected ERP rows). */
  producerUrl(): string {
    return `http://127.0.0.1:${this.slots[0]?.port ?? 0}`;
  }

  /** Log files of every process started so far. */
  logFiles(): string[] {
    return this.slots.flatMap((slot) => Array.from({ length: slot.starts }, (_, i) => join(this.options.logDir, `${slot.name}.${i + 1}.log`)));
  }

  /** The process id of worker `index` (modulo the count), or undefined when it is not running. */
  workerPid(index: number): number | undefined {
    const workers = this.slots.filter((slot) => slot.role === 'worker');
    const child = workers[index % workers.length]?.child;
    return child?.alive() ? child.pid : undefined;
  }

  /** SIGKILLs the worker `index` (modulo the count); returns its name, or undefined when it was not running. */
  async killWorker(index: number): Promise<string | undefined> {
    const workers = this.slots.filter((slot) => slot.role === 'worker');
    const slot = workers[index % workers.length];
    if (!slot?.child?.alive()) return undefined;
    slot.ending = true;
    slot.child.kill('SIGKILL');
    await slot.child.exited;
    this.kills += 1;
    return slot.name;
  }

  /** Starts every slot whose process is not running (killed workers, or a daemon that exited). */
  restartDead(): string[] {
    const restarted: string[] = [];
    for (const slot of this.slots) {
      if (slot.child?.alive()) continue;
      this.launch(slot);
      restarted.push(slot.name);
    }
    return restarted;
  }

  /** Stops every daemon gracefully (SIGTERM; SIGKILL after 8 s). */
  async stop(): Promise<void> {
    for (const slot of this.slots) slot.ending = true;
    await Promise.all(this.slots.map((slot) => slot.child?.stop(8000)));
  }

  private launch(slot: Slot): void {
    slot.starts += 1;
    slot.ending = false;
    const args = [join(this.options.root, 'bin', 'storesync.js'), 'run', '--role', slot.role, '--config', this.options.configFile];
    slot.child = startChild(process.execPath, args, join(this.options.logDir, `${slot.name}.${slot.starts}.log`), {
      env: { ...this.options.env, HTTP_PORT: String(slot.port) },
    });
    const child = slot.child;
    const start = slot.starts;
    void child.exited.then((code) => {
      if (!slot.ending && slot.child === child) this.crashes.push(`${slot.name} (start ${start}) exited with ${code}: ${lastWords(child.logFile)}`);
    });
  }
}

/** What a crashed daemon said last: its final error line (the log folder may be gone when the report is read). */
function lastWords(logFile: string): string {
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return `(no log at ${logFile})`;
  }
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('at '));
  const error = [...lines].reverse().find((line) => /error|storesync:|exited|Unhandled/i.test(line) && !line.startsWith('{"level":"info"'));
  return (error ?? lines.at(-1) ?? '(empty log)').slice(0, 300);
}
