/**
 * The worker side: one job per SKU. The job carries only the SKU; the values come from the pending
 * state at run time, so ten changes between two runs make one PUT. Per field the worker
 * - drops values not newer than the version the store already took (never stale under retries,
 *   duplicates or reordering),
 * - skips values equal to what the store last acknowledged (change detection) unless forced,
 * - validates the rest with the store's rules, then sends one PUT with the client's retries off
 *   (BullMQ owns retries), and on success records what the store now holds.
 * The error's class decides what happens next: 429 pauses the whole queue, temporary errors are
 * retried with backoff, permanent ones fail the job at once with a reason naming the SKU.
 */
import { isDeepStrictEqual } from 'node:util';

import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';

import { formatIssue, StoreSyncError, ValidationError, type ValidationIssue } from '../../errors.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import { STALLED_LIMIT_REASON, syncWorkerOptions } from '../../queue/crash-recovery.js';
import { willRetry } from '../../queue/job-retry.js';
import { returnJobOnAbort } from '../../queue/worker-shutdown.js';
import { StoreNotFoundError, StoreRateLimitedError } from '../../store/errors.js';
import type { InventoryUpdateInput } from '../../store/schemas/index.js';
import { validateInventoryUpdate } from '../../store/validation.js';
import { enqueueSkus } from './enqueue.js';
import { isStockInput, planStock } from './published-stock.js';
import type { Reservation } from './reservations.js';
import type { InventoryRuntime } from './runtime.js';
import type { PendingRead, Settlement, SkuState } from './state.js';
import type { InventoryJobData, JobOutcome } from './types.js';

/** What a job returns (shown in the dashboard). */
export interface InventoryJobResult {
  outcome: 'completed' | 'skipped' | 'created';
  fields: string[];
}

const QUEUE = QUEUE_NAMES.inventory;

/**
 * The worker needs a limiter even though `store.rateLimit` is applied per request in the store client
 * (one budget for every flow): BullMQ only honours a manual rate limit (the 429 pause) when
 * `limiter.max` is set. This one never limits by itself.
 */
const UNLIMITED = { max: 1_000_000, duration: 1000 };

/**
 * A SKU's write lock lives this long unless renewed; it is renewed while the job runs, so a worker
 * killed mid-job holds up the SKU's next job for at most this long (its own job, restarted after the
 * stall check, takes the lock back at once: the owner is the job id).
 */
const LOCK_TTL_MS = 15_000;

/** Starts a worker on the inventory queue; `connection` is its own (the caller closes it after the worker). */
export function createInventoryWorker(rt: InventoryRuntime, connection: Redis): Worker<InventoryJobData, InventoryJobResult> {
  const worker = new Worker<InventoryJobData, InventoryJobResult>(
    QUEUE,
    (job, token, signal) => returnJobOnAbort(job, token, signal, processInventoryJob(rt, job, token)),
    {
      connection,
      prefix: rt.config.redis.prefix,
      concurrency: rt.config.inventory.concurrency,
      limiter: UNLIMITED,
      ...syncWorkerOptions(rt.instance),
    },
  );
  worker.on('error', (error) => rt.logger.warn({ err: error }, 'inventory worker error'));
  worker.on('failed', (job, error) => {
    // Stalled out (marked by a worker of another version, or with other settings): the SKU's values
    // are still pending, so a new job sends them; the failed one stays visible.
    if (job && error.message === STALLED_LIMIT_REASON) {
      rt.logger.warn({ sku: job.data.sku, jobId: job.id }, 'inventory job stalled out; its SKU is queued again');
      void enqueueSkus(rt.queue, [job.data.sku]).catch((err: unknown) => rt.logger.error({ err, sku: job.data.sku }, 'could not queue a stalled-out SKU again'));
    }
  });
  return worker;
}

/** Runs one inventory job under the SKU's write lock; a SKU being written elsewhere waits its turn. */
async function processInventoryJob(rt: InventoryRuntime, job: Job<InventoryJobData>, token: string | undefined): Promise<InventoryJobResult> {
  const started = rt.now();
  const { sku } = job.data;
  const done = (outcome: JobOutcome, fields: string[], reason?: string): void => {
    rt.metrics.jobs.inc({ queue: QUEUE, outcome });
    rt.metrics.jobDuration.observe({ queue: QUEUE }, (rt.now() - started) / 1000);
    rt.events.emit('inventory:job:done', { sku, outcome, fields, ...(reason === undefined ? {} : { reason }) });
  };
  const owner = String(job.id);
  // One round trip takes the lock and reads the state; one settles what was handled and unlocks.
  const state = await rt.state.lockAndRead(sku, owner, LOCK_TTL_MS);
  if (!state) {
    // Not an attempt: the job comes back after a short delay, once the other write is done.
    await job.moveToDelayed(rt.now() + rt.config.inventory.backoffMs, token);
    done('deferred', []);
    throw new DelayedError();
  }
  const renew = setInterval(() => void rt.state.lock(sku, owner, LOCK_TTL_MS).catch(() => undefined), LOCK_TTL_MS / 3);
  const handled: Handled = { settlements: [] };
  let outcome: Parameters<typeof done> | undefined;
  try {
    return await writeSku(rt, job, state, handled, (...args) => (outcome = args));
  } finally {
    clearInterval(renew);
    try {
      await rt.state.settle(sku, handled.settlements, handled.ackedAt, owner);
    } finally {
      // Told once the state is settled: whoever listens sees what the job left in Redis.
      if (outcome) done(...outcome);
    }
  }
}

/** What a job handled, settled (and its lock released) in one round trip when it ends. */
interface Handled {
  settlements: Settlement[];
  /** When the store acknowledged the job's write, if it did. */
  ackedAt?: number;
}

/**
 * Plans, validates and sends the pending fields of the job's SKU; what it handled goes into `handled`
 * (applied once the caller settles it: a failed PUT leaves it pending, so the next attempt plans it
 * again the same way).
 */
async function writeSku(
  rt: InventoryRuntime,
  job: Job<InventoryJobData>,
  state: SkuState,
  handled: Handled,
  done: (outcome: JobOutcome, fields: string[], reason?: string) => void,
): Promise<InventoryJobResult> {
  const { sku } = job.data;
  const { send, settled, onApplied, passed } = plan(rt, state, job.data);
  handled.settlements.push(...settled);
  // Booked reservations the ERP figure has passed apply to no figure from now on.
  await rt.reservations.prune(sku, passed);
  if (send.size === 0) {
    done('skipped', []);
    return { outcome: 'skipped', fields: [] };
  }

  const fields = [...send.keys()];
  // Values come from Redis as JSON; the store's validation decides whether they may be sent.
  const item = { InternalId: 0, Code: sku, ...Object.fromEntries([...send].map(([f, r]) => [f, r.entry.value])) } as InventoryUpdateInput;
  try {
    const issues = validateInventoryUpdate(item, `SKU ${sku}`);
    if (issues.length > 0) throw new ValidationError(issues);
    const created = await write(rt, item);
    for (const [field, read] of send) handled.settlements.push({ mode: 'applied', field, read, ackValue: read.entry.value });
    handled.settlements.push(...onApplied);
    handled.ackedAt = rt.now();
    observeLag(rt, send);
    done('completed', fields);
    return { outcome: created ? 'created' : 'completed', fields };
  } catch (error) {
    if (error instanceof ValidationError) {
      const reason = await reject(rt, sku, send, error.issues, handled.settlements);
      done('rejected', fields, reason);
      throw new UnrecoverableError(reason);
    }
    if (error instanceof StoreRateLimitedError) {
      // Pause the whole queue for as long as the store asked; the job goes back to waiting without
      // spending an attempt.
      await rt.queue.rateLimit(error.retryAfterMs);
      done('rate_limited', fields, error.message);
      throw Worker.RateLimitError();
    }
    if (error instanceof StoreNotFoundError) {
      const reason = `SKU ${sku}: not found on the store (404); set inventory.createMissing to create unknown items`;
      done('failed', fields, reason);
      throw new UnrecoverableError(reason);
    }
    const reason = error instanceof Error ? error.message : String(error);
    if (error instanceof StoreSyncError && !error.retryable) {
      done('failed', fields, reason);
      throw new UnrecoverableError(`SKU ${sku}: ${reason}`);
    }
    const last = !willRetry(job, error);
    done(last ? 'failed' : 'retried', fields, reason);
    throw error;
  }
}

/** What a job sends, settles now, settles once sent, and prunes. */
interface Plan {
  send: Map<string, PendingRead>;
  settled: Settlement[];
  onApplied: Settlement[];
  passed: Reservation[];
}

/**
 * Sorts the pending fields of a SKU into what to send and what to settle without sending. The stock is
 * planned apart (`planStock`): the store gets the published figure, recomputed on every job.
 */
function plan(rt: InventoryRuntime, state: SkuState, data: InventoryJobData): Plan {
  const stock = planStock(state, data.force === true, rt.config.inventory.safetyStock);
  const send = new Map<string, PendingRead>();
  const settled: Settlement[] = [...stock.settled];
  if (stock.send) send.set('Stock', stock.send);
  for (const [field, read] of state.pending) {
    if (isStockInput(field)) continue;
    const { entry } = read;
    const forced = data.force === true || entry.force === true;
    const applied = state.applied.get(field);
    // An equal version is the same change: resent only when forced (the reconcile saw the store differ).
    if (applied !== undefined && (entry.version < applied || (entry.version === applied && !forced))) {
      settled.push({ mode: 'drop', field, read });
    } else if (!forced && state.acked.has(field) && isDeepStrictEqual(state.acked.get(field), entry.value)) {
      settled.push({ mode: 'applied', field, read });
    } else {
      send.set(field, read);
    }
  }
  return { send, settled, onApplied: stock.onApplied, passed: stock.passed };
}

/** PUTs the item; a 404 creates it when `inventory.createMissing` is on. Returns true when created. */
async function write(rt: InventoryRuntime, item: InventoryUpdateInput): Promise<boolean> {
  try {
    await rt.store.inventory.update(item, { attempts: 1 });
    return false;
  } catch (error) {
    if (!(error instanceof StoreNotFoundError) || !rt.config.inventory.createMissing) throw error;
    await rt.store.inventory.create(item, { attempts: 1 });
    return true;
  }
}

/**
 * A value the store would refuse: its field leaves the pending state (it would fail again; added to
 * `settlements`), and the other fields, if any, get a follow-up job (it starts when this one has failed).
 */
async function reject(
  rt: InventoryRuntime,
  sku: string,
  send: Map<string, PendingRead>,
  issues: readonly ValidationIssue[],
  settlements: Settlement[],
): Promise<string> {
  const broken = new Set(issues.map((issue) => topField(issue.field)));
  const all = broken.has('Code') || broken.has('(body)') || [...broken].some((field) => !send.has(field));
  const dropped = [...send].filter(([field]) => all || broken.has(field));
  for (const [field, read] of dropped) settlements.push({ mode: 'drop', field, read });
  if (dropped.length < send.size) await enqueueSkus(rt.queue, [sku]);
  const reason = issues.map(formatIssue).join('; ');
  for (const issue of issues) {
    const source = send.get(topField(issue.field))?.entry.source ?? 'unknown';
    rt.metrics.erpRecordsRejected.inc({ source, reason: issue.rule });
  }
  rt.logger.warn({ sku }, `inventory update refused before sending: ${reason}`);
  return reason;
}

/** `Properties[0].Key` → `Properties`. */
function topField(field: string): string {
  return field.split(/[.[]/)[0] ?? field;
}

function observeLag(rt: InventoryRuntime, sent: Map<string, PendingRead>): void {
  const now = rt.now();
  for (const { entry } of sent.values()) {
    if (entry.changedAt !== undefined) rt.metrics.syncLag.observe({ flow: 'inventory' }, Math.max(0, now - entry.changedAt) / 1000);
  }
}
