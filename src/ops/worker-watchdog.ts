/**
 * Keeps BullMQ workers consuming across Redis outages. ioredis reconnects by itself, but a worker whose
 * main loop ended on an error (or whose blocking connection did not come back) stays idle while the
 * queue fills. The watchdog re-runs any watched worker that is neither running, paused nor closing:
 * when a connection becomes ready again and on a periodic check.
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';

import { TypedEmitter } from '../events.js';
import type { Logger } from '../log.js';

/** What the watchdog reports; tests wait on these. */
export interface WatchdogEvents extends Record<string, unknown> {
  'worker:restarted': { queue: string };
  'worker:error': { queue: string; error: Error };
}

/** Options of `WorkerWatchdog`. */
export interface WorkerWatchdogOptions {
  logger: Logger;
  /** Period of the check that catches a worker that stopped without an event. */
  intervalMs?: number;
}

/** Watches workers and connections; `stop()` before closing the workers so that closing is not undone. */
export class WorkerWatchdog {
  readonly events = new TypedEmitter<WatchdogEvents>();
  readonly #logger: Logger;
  readonly #workers = new Set<Worker>();
  readonly #timer: NodeJS.Timeout;
  #stopped = false;

  constructor(options: WorkerWatchdogOptions) {
    this.#logger = options.logger;
    this.#timer = setInterval(() => this.check(), options.intervalMs ?? 5000);
    this.#timer.unref();
  }

  /** Watches a worker: logs its errors and restarts it when it stops. */
  watch(worker: Worker): void {
    if (this.#workers.has(worker)) return;
    this.#workers.add(worker);
    worker.on('error', (error) => {
      // The flows log their workers' errors, and the Redis monitor the outage; this is for tracing.
      this.#logger.debug({ queue: worker.name, err: error }, 'worker error');
      this.events.emit('worker:error', { queue: worker.name, error });
    });
    worker.on('closed', () => {
      this.#workers.delete(worker);
      if (!this.#stopped) this.#logger.error({ queue: worker.name }, 'worker closed while the daemon runs');
    });
  }

  /** Checks the workers whenever `connection` (re)connects. */
  watchConnection(connection: Redis): void {
    connection.on('ready', () => this.check());
  }

  /** Re-runs every watched worker that is not running; safe to call at any time. */
  check(): void {
    if (this.#stopped) return;
    for (const worker of this.#workers) {
      if (worker.isRunning() || worker.isPaused() || worker.closing) continue;
      this.#logger.warn({ queue: worker.name }, 'worker was not running: restarting it');
      this.events.emit('worker:restarted', { queue: worker.name });
      worker.run().catch((error: unknown) => {
        this.#logger.warn({ queue: worker.name, err: error }, 'worker stopped again');
      });
    }
  }

  /** Stops watching (shutdown). */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }
}
