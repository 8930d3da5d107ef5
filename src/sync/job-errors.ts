/**
 * How errors become job outcomes in the sales and fulfillment workers. The error's class decides:
 * ERP sink failures are always retried (a table being fixed or an ERP restarting comes back), temporary
 * store errors are retried, and refusals (validation, 404, 400) fail the job at once as BullMQ's
 * UnrecoverableError, keeping their reason, so no attempts are wasted.
 */
import { UnrecoverableError } from 'bullmq';

import { ErpError, StoreSyncError } from '../errors.js';

/** The error a processor throws to BullMQ for `error`. */
export function toJobError(error: unknown): Error {
  if (error instanceof ErpError) return error;
  if (error instanceof StoreSyncError && !error.retryable) return new UnrecoverableError(`${error.code}: ${error.message}`);
  return error instanceof Error ? error : new Error(String(error));
}
