/**
 * One account of a Redis outage for the whole process, instead of a line per connection, worker and retry: one
 * `warn` line when it starts (what is unreachable, in words), one per interval while it lasts (for how long, and the
 * errors it kept out of the log, per flow), one `info` line when it ends, with its duration. The health connection
 * (no offline queue: it fails as soon as Redis does) decides when an outage starts and ends; the flows' workers
 * hand their errors here (`absorb`), and a known connection error is then counted, never logged with a stack.
 */
import type { Redis } from 'ioredis';

import type { Logger } from '../log.js';
import { describeConnectionError, isConnectionError } from '../queue/redis-diagnosis.js';
import { withTimeout } from '../queue/with-timeout.js';
import type { RedisErrorSink } from '../sync/flow.js';

/** Options of `RedisOutage`. */
export interface RedisOutageOptions {
  logger: Logger;
  /** Says why Redis is unreachable, given the last connection error (src/queue/redis-diagnosis.ts); bounded in time. */
  diagnose(lastError: unknown): Promise<string>;
  /** How often a line is written while the outage lasts (`log.summaryIntervalMs`). @defaultValue 60000 */
  intervalMs?: number;
  /** Time allowed for the first errors to arrive before the start line says why. @defaultValue 500 */
  settleMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** The longest a diagnosis may delay a line or a /readyz answer. */
const DIAGNOSIS_TIMEOUT_MS = 1500;

/** Follows Redis' reachability and writes the outage lines. `close()` before the connections are closed. */
export class RedisOutage implements RedisErrorSink {
  readonly #logger: Logger;
  readonly #diagnose: (lastError: unknown) => Promise<string>;
  readonly #intervalMs: number;
  readonly #settleMs: number;
  readonly #now: () => number;
  #health: Redis | undefined;
  /** When the current outage began; undefined while Redis is reachable. */
  #since: number | undefined;
  #reason = '';
  #lastError: unknown;
  /** Errors kept out of the log since the last line, and during the whole outage, per flow. */
  #suppressed = new Map<string, number>();
  #total = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  /** The lines are written in order: an end never before its start. */
  #lines: Promise<void> = Promise.resolve();
  #diagnosis: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: RedisOutageOptions) {
    this.#logger = options.logger;
    this.#diagnose = options.diagnose;
    this.#intervalMs = options.intervalMs ?? 60_000;
    this.#settleMs = options.settleMs ?? 500;
    this.#now = options.now ?? Date.now;
  }

  /** Follows the connection that decides: an outage starts at its first error or lost connection, ends when it is ready. */
  watch(health: Redis): void {
    this.#health = health;
    health.on('error', (error: Error) => this.#seen('connections', error));
    for (const event of ['close', 'reconnecting']) health.on(event, () => this.#begin(undefined));
    health.on('ready', () => this.#end());
  }

  /** Follows one more connection: its errors are counted (and ioredis does not print them as unhandled). */
  track(connection: Redis): void {
    connection.on('error', (error: Error) => {
      if (!this.absorb('connections', error)) this.#logger.debug({ err: error }, 'Redis connection error');
    });
  }

  /** Counts a flow's Redis connection error during an outage (see RedisErrorSink); other errors are the caller's to log. */
  absorb(flow: string, error: unknown): boolean {
    if (!isConnectionError(error)) return false;
    if (this.#since === undefined && !this.#lost()) {
      // A lost connection the health connection has not (yet) seen, or one at start: traced only; an outage starts
      // with the health connection's own error or loss.
      this.#logger.debug({ flow, err: error }, 'Redis connection error');
      return true;
    }
    this.#seen(flow, error);
    return true;
  }

  /** Words for a failed Redis check of /readyz: the outage's cause and start, or the error's own meaning. */
  async explain(error: unknown): Promise<string> {
    // The check may fail a moment before the health connection's own event: the outage starts with it.
    if (this.#since === undefined && isConnectionError(error) && this.#lost()) this.#begin(error);
    const since = this.#since;
    const own = describeConnectionError(error) ?? (error instanceof Error ? error.message : String(error));
    if (since === undefined) return own;
    await this.#diagnosis;
    // Over while the sentinels were asked: the check's own error is all there is to say.
    if (this.#since !== since) return own;
    return `${this.#reason}, since ${new Date(since).toISOString()}`;
  }

  /** Stops the interval lines; events after this (the shutdown closing the connections) are ignored. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }

  /**
   * Whether the health connection lost Redis (or there is none to ask). Still connecting at start is no outage: the
   * first refused attempt starts one, by its error.
   */
  #lost(): boolean {
    const status = this.#health?.status;
    return status === undefined || status === 'close' || status === 'reconnecting' || status === 'end';
  }

  #seen(flow: string, error: unknown): void {
    // A socket error (ECONNREFUSED at an address) says more than ioredis's "Connection is closed." after it.
    if (this.#lastError === undefined || typeof (error as { code?: unknown }).code === 'string') this.#lastError = error;
    this.#begin(error);
    if (this.#since === undefined) return;
    this.#suppressed.set(flow, (this.#suppressed.get(flow) ?? 0) + 1);
    this.#total.set(flow, (this.#total.get(flow) ?? 0) + 1);
  }

  #begin(error: unknown): void {
    if (this.#since !== undefined || this.#closed) return;
    const since = this.#now();
    this.#since = since;
    this.#lastError = error;
    this.#suppressed.clear();
    this.#total.clear();
    this.#timer = setInterval(() => this.#stillDown(), this.#intervalMs);
    this.#timer.unref();
    // The lost connection comes before the reason: the first reconnection errors say what is unreachable.
    this.#rediagnose(this.#settleMs);
    this.#write(() => {
      this.#logger.warn({ since: new Date(since).toISOString(), reason: this.#reason }, `Redis unreachable: ${this.#reason}`);
    });
  }

  #stillDown(): void {
    if (this.#since === undefined) return;
    const downS = Math.round((this.#now() - this.#since) / 1000);
    const suppressed = Object.fromEntries(this.#suppressed);
    this.#suppressed.clear();
    this.#rediagnose(0);
    this.#write(() => {
      this.#logger.warn({ downS, reason: this.#reason, suppressed }, `Redis still unreachable after ${downS} s: ${this.#reason}; ${counted(suppressed)} since the last line`);
    });
  }

  #end(): void {
    if (this.#since === undefined || this.#closed) return;
    const since = this.#since;
    const downS = Math.round((this.#now() - since) / 100) / 10;
    const suppressed = Object.fromEntries(this.#total);
    this.#since = undefined;
    clearInterval(this.#timer);
    this.#write(() => {
      this.#logger.info({ downS, since: new Date(since).toISOString(), suppressed }, `Redis reachable again after ${downS} s; ${counted(suppressed)} during the outage`);
    });
  }

  /** Asks again why Redis is unreachable, after `delayMs`; the next line waits for the answer. */
  #rediagnose(delayMs: number): void {
    this.#diagnosis = (async () => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
      this.#reason = await withTimeout(this.#diagnose(this.#lastError), DIAGNOSIS_TIMEOUT_MS, 'the Redis diagnosis').catch(
        () => describeConnectionError(this.#lastError) ?? 'connection lost',
      );
    })();
  }

  #write(line: () => void): void {
    const diagnosis = this.#diagnosis;
    this.#lines = this.#lines.then(() => diagnosis).then(line);
  }
}

/** "12 errors suppressed (inventory 4, connections 8)", or "no errors suppressed". */
function counted(suppressed: Record<string, number>): string {
  const entries = Object.entries(suppressed);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return 'no errors suppressed';
  return `${total} errors suppressed (${entries.map(([flow, n]) => `${flow} ${n}`).join(', ')})`;
}
