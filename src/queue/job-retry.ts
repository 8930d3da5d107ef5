/** Whether BullMQ runs a job again after a failure: the one place that does this arithmetic. */
import type { Job } from 'bullmq';

import { UnrecoverableError } from './bullmq-parts.js';

/**
 * True when BullMQ will run `job` again after its processor throws `error`: the error is not an
 * `UnrecoverableError` and an attempt is left (`attemptsMade` counts the attempts before this one).
 */
export function willRetry(job: Pick<Job, 'attemptsMade' | 'opts'>, error: unknown): boolean {
  return !(error instanceof UnrecoverableError) && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
}
