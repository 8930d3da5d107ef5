/**
 * The crash-recovery check of the chaos run: a job held by a worker killed with SIGKILL is taken up
 * again within `withinMs`. Just before each kill the active jobs of the sync queues taken by the
 * process about to die are noted (BullMQ's `processedBy`, which storesync sets to host:pid) with their
 * `processedOn`; `withinMs` later each must be finished, gone (completed and trimmed) or started again
 * (a newer `processedOn`). Anything else sat unrecovered.
 */
import { hostname } from 'node:os';

import type { Redis } from 'ioredis';

import type { CheckResult } from './checks.js';

interface Noted {
  queue: string;
  id: string;
  processedOn: string | null;
}

/** Notes the active jobs at each kill and checks them `withinMs` later. */
export class RecoveryWatch {
  readonly #checks: Array<Promise<void>> = [];
  readonly #late: string[] = [];
  #jobs = 0;
  #unchecked = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly withinMs: number,
    private readonly queues: readonly string[] = ['inventory', 'sales'],
  ) {}

  /** Call right before killing the process `pid`. */
  async beforeKill(label: string, pid: number): Promise<void> {
    let noted: Noted[];
    try {
      noted = await this.#activeOf(`${hostname()}:${pid}`);
    } catch {
      this.#unchecked += 1;
      return;
    }
    this.#jobs += noted.length;
    this.#checks.push(
      new Promise((resolve) => setTimeout(resolve, this.withinMs)).then(async () => {
        for (const job of noted) {
          try {
            if (!(await this.#recovered(job))) this.#late.push(`${label}: ${job.queue} job ${job.id} not taken up within ${this.withinMs / 1000} s`);
          } catch {
            this.#unchecked += 1;
          }
        }
      }),
    );
  }

  /** Waits for the pending checks and reports. */
  async result(): Promise<CheckResult> {
    await Promise.all(this.#checks);
    const late = this.#late;
    return {
      name: `recovery: every job a SIGKILLed worker held was taken up again within ${this.withinMs / 1000} s (${this.#jobs} jobs at ${this.#checks.length} kills)`,
      ok: late.length === 0,
      detail:
        (late.length === 0 ? 'all taken up' : `${late.slice(0, 5).join('; ')}${late.length > 5 ? ` … (${late.length} in all)` : ''}`) +
        (this.#unchecked > 0 ? `; ${this.#unchecked} not checkable (Redis down)` : ''),
    };
  }

  async #activeOf(instance: string): Promise<Noted[]> {
    const noted: Noted[] = [];
    for (const queue of this.queues) {
      const ids = await this.redis.lrange(`${this.prefix}:${queue}:active`, 0, -1);
      for (const id of ids) {
        const [processedOn, processedBy] = await this.redis.hmget(`${this.prefix}:${queue}:${id}`, 'processedOn', 'pb');
        if (processedBy === instance) noted.push({ queue, id, processedOn: processedOn ?? null });
      }
    }
    return noted;
  }

  async #recovered(job: Noted): Promise<boolean> {
    const key = `${this.prefix}:${job.queue}:${job.id}`;
    const [processedOn, finishedOn] = await this.redis.hmget(key, 'processedOn', 'finishedOn');
    return finishedOn !== null || processedOn === null || processedOn !== job.processedOn;
  }
}
