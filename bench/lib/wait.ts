/**
 * Bounded waiting: a condition is polled until it holds or a deadline passes, so a run never hangs and
 * never sleeps longer than it must.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** A plain pause (`node:timers/promises` setTimeout), for pacing, never for waiting on a condition. */
export { sleep };

/** Polls `check` every `intervalMs` until it returns a truthy value; throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  { timeoutMs = 30_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(intervalMs);
  }
}
