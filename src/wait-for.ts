/**
 * Bounded waiting on a condition that no event announces (a queue drained, a server answering): polled until it
 * holds or a deadline passes, so a caller never hangs and never sleeps longer than it must. The demo, the tests and
 * the bench share it.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Falsy values a check returns while its condition does not hold yet. */
type Pending = false | null | undefined | 0 | '';

/** How long and how often {@link waitFor} polls. */
export interface WaitOptions {
  /** Time allowed before it throws. @defaultValue 10000 */
  timeoutMs?: number;
  /** Pause between two checks. @defaultValue 20 */
  intervalMs?: number;
  /** What is waited for, named in the error on timeout. @defaultValue 'condition' */
  message?: string;
}

/**
 * Calls `check` until it returns a truthy value and returns that value; a check that throws counts as not yet and its
 * last error is named in the timeout error.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 20, message = 'condition' }: WaitOptions = {},
): Promise<Exclude<T, Pending>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Exclude<T, Pending>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${message}${why}`);
    }
    await sleep(intervalMs);
  }
}
