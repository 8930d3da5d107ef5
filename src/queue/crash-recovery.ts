/**
 * How the sync workers recover the jobs of a worker that died (SIGKILL, OOM, a lost machine). BullMQ
 * keeps a lock per active job, renewed by the worker holding it every `lockDuration / 2`; every
 * `stalledInterval` each live worker marks the active jobs and moves back to waiting those whose lock
 * is gone since the previous mark. A job held by a killed worker is therefore back in waiting at most
 * `lockDuration + stalledInterval` after the kill (10 + 5 = 15 s; BullMQ's defaults, 30 + 30, made it
 * up to a minute), leaving 5 s of the 20 s goal to pick it up.
 *
 * - `lockDuration` 10 s: renewed every 5 s, so a worker loses a job's lock only when its event loop is
 *   blocked for more than 5 s (nothing of storesync's blocks that long: the largest reads stream).
 * - `stalledInterval` 5 s: one small Lua script per worker every 5 s.
 * - `maxStalledCount` unbounded: a sync job holds no value of its own (the values wait in the pending
 *   state or the sale's record), so re-running it after any number of crashes is always right, while
 *   failing it would leave a change unsent until something else queued its key again. BullMQ's default
 *   of 1 failed jobs whose workers had merely been killed twice.
 */
import type { WorkerOptions } from 'bullmq';

/** BullMQ's reason for a job failed after stalling more than `maxStalledCount` times. */
export const STALLED_LIMIT_REASON = 'job stalled more than allowable limit';

/** The recovery options of every sync worker, named after its process (`processedBy` of its jobs). */
export function syncWorkerOptions(instance: string | undefined): Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount' | 'name'> {
  return { ...CRASH_RECOVERY, ...(instance === undefined ? {} : { name: instance }) };
}

/** Worker options of every sync worker: see the module comment for why these values. */
export const CRASH_RECOVERY = {
  lockDuration: 10_000,
  stalledInterval: 5_000,
  maxStalledCount: Number.MAX_SAFE_INTEGER,
} as const satisfies Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount'>;
