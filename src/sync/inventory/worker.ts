/**
 * The worker side. A job carries a batch of SKUs (often one); the values come from the pending state at
 * run time, so ten changes between two runs make one PUT. One round trip takes the SKUs' write locks and
 * reads their state, each SKU's PUT then waits for one of the process's store slots (`store-slots.ts`),
 * and one round trip settles what was handled and releases the locks. Per field the worker
 * - drops values not newer than the version the store already took (never stale under retries,
 *   duplicates or reordering),
 * - skips values equal to what the store last acknowledged (change detection) unless forced,
 * - validates the rest with the store's rules, then sends one PUT per SKU with the client's retries off
 *   (BullMQ owns retries), and on success records what the store now holds.
 *
 * A job of one SKU ends as its SKU did: a 429 or refused credentials pause the whole queue, temporary
 * errors are retried with backoff, permanent ones fail the job at once with a reason naming the SKU,
 * and a SKU another job is writing waits its turn. In a batch one SKU never holds up the others: a SKU
 * that failed, was refused or is being written elsewhere is handed to a job of its own (`isolated`),
 * which then ends as above, so a failing SKU still ends as a failed job named after it, retried from
 * the dashboard. A 429 or refused credentials stop the batch: its unsent SKUs stay in the job, which
 * goes back to wait for the store (refused credentials: until the next login may be tried).
 */
import { isDeepStrictEqual } from 'node:util';

import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';

import { formatIssue, StoreSyncError, ValidationError, type ValidationIssue } from '../../errors.js';
import { DelayedError, UnrecoverableError, Worker } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import { STALLED_LIMIT_REASON, syncWorkerOptions } from '../../queue/crash-recovery.js';
import { willRetry } from '../../queue/job-retry.js';
import { MANUAL_RATE_LIMIT } from '../../queue/manual-rate-limit.js';
import { returnJobOnAbort } from '../../queue/worker-shutdown.js';
import type { StoreLoginRefusedError} from '../../store/errors.js';
import { StoreNotFoundError, StoreRateLimitedError } from '../../store/errors.js';
import type { InventoryUpdateInput } from '../../store/schemas/index.js';
import { credentialsHoldMs, isLoginHold } from '../job-errors.js';
import { enqueueSkus, PRIORITY } from './enqueue.js';
import { isStockInput, type KitStock, placementOf, planKitStock, planStock, readKitStocks, requeueKits, type Reservation } from './listing/index.js';
import { RereadGate } from './reread-gate.js';
import type { InventoryRuntime } from './runtime.js';
import type { PendingRead, Settlement, SkuState } from './state.js';
import { StoreSlots } from './store-slots.js';
import { codeOf, homeSiteOf, homeTargetOf, targetBody, targetLabel } from './target-key.js';
import { type InventoryJobData, type JobOutcome,jobSkus } from './types.js';

/** What a job returns (shown in the dashboard): a job of one SKU says what it sent, a batch counts. */
export type InventoryJobResult =
  | { outcome: 'completed' | 'skipped' | 'created'; fields: string[] }
  | { outcome: 'batch'; skus: number; counts: Partial<Record<JobOutcome, number>>; isolated: string[] };

const QUEUE = QUEUE_NAMES.inventory;

/**
 * A SKU's write lock lives this long unless renewed; it is renewed while the job runs, so a worker
 * killed mid-job holds up the SKU's next job for at most this long (its own job, restarted after the
 * stall check, takes the lock back at once: the owner is the job id).
 */
const LOCK_TTL_MS = 15_000;

/**
 * Starts a worker on the inventory queue; `connection` is its own (the caller closes it after the
 * worker). It runs up to `inventory.concurrency` jobs at once, and their SKUs share as many store slots.
 */
export function createInventoryWorker(rt: InventoryRuntime, connection: Redis): Worker<InventoryJobData, InventoryJobResult> {
  const slots = new StoreSlots(rt.config.inventory.concurrency);
  const gate = new RereadGate(rt);
  const worker = new Worker<InventoryJobData, InventoryJobResult>(
    QUEUE,
    (job, token, signal) => returnJobOnAbort(job, token, signal, gate.pass(signal).then(() => processInventoryJob(rt, slots, job, token, signal))),
    {
      connection,
      prefix: rt.config.redis.prefix,
      concurrency: rt.config.inventory.concurrency,
      // Lets a 429 or refused credentials pause the queue.
      limiter: MANUAL_RATE_LIMIT,
      ...syncWorkerOptions(rt.instance),
    },
  );
  worker.on('error', (error) => {
    if (!rt.redisErrors?.absorb('inventory', error)) rt.logger.warn({ err: error }, 'inventory worker error');
  });
  worker.on('failed', (job, error) => {
    // Stalled out (marked by a worker of another version, or with other settings): the SKUs' values
    // are still pending, so new jobs send them; the failed one stays visible.
    if (job && error.message === STALLED_LIMIT_REASON) {
      const skus = jobSkus(job.data);
      rt.logger.warn({ skus: skus.length, jobId: job.id }, 'inventory job stalled out; its SKUs are queued again');
      void enqueueSkus(rt.queue, skus, batchOptions(rt, job)).catch((err: unknown) => rt.logger.error({ err, jobId: job.id }, 'could not queue the SKUs of a stalled-out job again'));
    }
  });
  return worker;
}

/** What became of one SKU of a job, and what to settle for it. */
interface SkuRun {
  sku: string;
  outcome: JobOutcome;
  fields: string[];
  reason?: string;
  /** The error behind `retried`, `failed`, `rate_limited` or `auth_paused`. */
  error?: unknown;
  /** The store did not know the item and it was created. */
  created?: boolean;
  /** The failure is permanent (the job fails without another attempt). */
  permanent?: boolean;
  settlements: Settlement[];
  /** When the store acknowledged the write, if it did. */
  ackedAt?: number;
}

/** Runs one inventory job: its SKUs under their write locks, each PUT in a store slot. */
async function processInventoryJob(
  rt: InventoryRuntime,
  slots: StoreSlots,
  job: Job<InventoryJobData>,
  token: string | undefined,
  signal?: AbortSignal,
): Promise<InventoryJobResult> {
  const started = rt.now();
  // A job queued before inventory.sites listed store.siteId names the bare Code: that site's target.
  const home = homeSiteOf(rt.config);
  const skus = jobSkus(job.data).map((sku) => homeTargetOf(sku, home));
  const owner = String(job.id);
  // One round trip takes the locks and reads the states; one settles what was handled and unlocks.
  const states = await rt.state.lockAndReadMany(skus, owner, LOCK_TTL_MS);
  const held = skus.filter((sku) => states.get(sku) !== undefined);
  const renew = held.length > 0 ? setInterval(() => void rt.state.lockMany(held, owner, LOCK_TTL_MS).catch(() => undefined), LOCK_TTL_MS / 3) : undefined;
  // With kits: the figures of the job's kit targets, from their components' state read now (under the locks).
  const kits = rt.kits ? await readKitStocks(rt, rt.kits, held) : undefined;
  const ctx: JobContext = { rt, slots, job, alone: skus.length === 1, priority: job.opts.priority ?? PRIORITY.other, ...(signal ? { signal } : {}), ...(kits ? { kits } : {}) };
  // Every SKU ends before the locks go, even when one of them meets an error (of Redis: the store's
  // answers are outcomes): no PUT of this job may still be in flight once it settles.
  const ended = await Promise.allSettled(skus.map((sku) => runSku(ctx, sku, states.get(sku))));
  clearInterval(renew);
  const runs = ended.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  // Settled whatever happened: a SKU without a run is only unlocked.
  const bySku = new Map(runs.map((run) => [run.sku, run]));
  await rt.state.settleMany(
    held.map((sku) => {
      const run = bySku.get(sku);
      return { sku, settlements: run?.settlements ?? [], ...(run?.ackedAt === undefined ? {} : { ackedAt: run.ackedAt }) };
    }),
    owner,
  );
  if (rt.kits && kits) await requeueKits(rt, rt.kits, states, new Set(kits.keys()), ctx.priority);
  const failure = ended.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  if (signal?.aborted) {
    // Shut down: the job is back in the queue with every SKU (returnJobOnAbort); the ones sent are settled.
    report(rt, runs, started);
    return { outcome: 'batch', skus: runs.length, counts: {}, isolated: [] };
  }
  return ctx.alone && runs[0] ? finishAlone(ctx, runs[0], token, started) : finishBatch(ctx, runs, started);
}

/** A SKU not sent because the process shuts down. */
class ShutdownError extends Error {}

/** What every SKU of a job shares. */
interface JobContext {
  rt: InventoryRuntime;
  slots: StoreSlots;
  job: Job<InventoryJobData>;
  /** The job carries one SKU: its SKU's failure is the job's. */
  alone: boolean;
  priority: number;
  /**
   * Set when the store answered 429 to one SKU, or no login can be made (refused credentials, a spent
   * login budget): the others are not sent, and the queue waits `waitMs`.
   */
  paused?: { error: StoreRateLimitedError | StoreLoginRefusedError; waitMs: number };
  /** Aborted at the shutdown deadline: SKUs still waiting for a slot are not sent. */
  signal?: AbortSignal;
  /** The job's kit targets and their figures (`inventory.kits`). */
  kits?: ReadonlyMap<string, KitStock>;
}

/**
 * Plans, validates and sends the pending fields of one SKU; never throws for the store's answer, which
 * becomes the run's outcome. What it handled goes into the run's settlements (applied once settled: a
 * failed PUT leaves the values pending, so the next attempt plans them again the same way).
 */
async function runSku(ctx: JobContext, sku: string, state: SkuState | undefined): Promise<SkuRun> {
  const { rt, job, alone } = ctx;
  // Not an attempt: the SKU comes back after a short delay, once the other write is done.
  if (!state) return { sku, outcome: 'deferred', fields: [], settlements: [] };
  const { send, settled, onApplied, passed } = plan(rt, sku, state, job.data.force === true, ctx.kits?.get(sku));
  const fields = [...send.keys()];
  const run = { sku, fields, settlements: [...settled] };
  // Booked reservations the ERP figure has passed apply to no figure from now on (they are per Code).
  await rt.reservations.prune(codeOf(sku), passed);
  if (send.size === 0) return { ...run, outcome: 'skipped' };

  // Values come from Redis as JSON; the store client's validation (before anything is sent) decides
  // whether they may be sent. The target names itself: Code, and SiteId and the price list if any.
  const lists = rt.config.inventory.priceLists;
  const label = targetLabel(sku, lists);
  const body: Record<string, unknown> = { InternalId: 0 };
  for (const [field, read] of send) body[field] = read.entry.value;
  const item = Object.assign(body, targetBody(sku, lists)) as InventoryUpdateInput;
  try {
    const created = await ctx.slots.run(ctx.priority, () => {
      // The store asked to slow down or refused the credentials, or the process is shutting down, while
      // this SKU waited for a slot: it stays unsent (and pending).
      if (ctx.paused) throw ctx.paused.error;
      if (ctx.signal?.aborted) throw new ShutdownError();
      return write(rt, item);
    });
    for (const [field, read] of send) run.settlements.push({ mode: 'applied', field, read, ackValue: read.entry.value });
    run.settlements.push(...onApplied);
    observeLag(rt, send);
    return { ...run, outcome: 'completed', created, ackedAt: rt.now() };
  } catch (error) {
    if (error instanceof ShutdownError) return { ...run, outcome: 'deferred' };
    if (error instanceof ValidationError) {
      const issues = error.issues.map((issue) => ({ ...issue, record: `SKU ${label}` }));
      // In a batch the SKU's own job refuses it (and records the refusal where an admin sees it).
      if (!alone) return { ...run, outcome: 'isolated', reason: issues.map(formatIssue).join('; '), permanent: true };
      return { ...run, outcome: 'rejected', reason: await reject(rt, sku, send, issues, run.settlements), permanent: true };
    }
    if (isLoginHold(error)) {
      ctx.paused ??= { error, waitMs: credentialsHoldMs(error) };
      return { ...run, outcome: 'auth_paused', reason: error.message, error };
    }
    if (error instanceof StoreRateLimitedError) {
      ctx.paused ??= { error, waitMs: error.retryAfterMs };
      return { ...run, outcome: 'rate_limited', reason: error.message, error };
    }
    if (error instanceof StoreNotFoundError) {
      const reason = `SKU ${label}: not found on the store (404); set inventory.createMissing to create unknown items`;
      return { ...run, outcome: alone ? 'failed' : 'isolated', reason, error, permanent: true };
    }
    const reason = error instanceof Error ? error.message : String(error);
    if (error instanceof StoreSyncError && !error.retryable) {
      return { ...run, outcome: alone ? 'failed' : 'isolated', reason: `SKU ${label}: ${reason}`, error, permanent: true };
    }
    if (!alone) return { ...run, outcome: 'isolated', reason, error };
    return { ...run, outcome: willRetry(job, error) ? 'retried' : 'failed', reason, error };
  }
}

/** A job of one SKU ends as its SKU did: returned, retried, delayed, paused or failed. */
async function finishAlone(ctx: JobContext, run: SkuRun, token: string | undefined, started: number): Promise<InventoryJobResult> {
  const { rt, job } = ctx;
  if (run.outcome === 'deferred') await job.moveToDelayed(rt.now() + rt.config.inventory.backoffMs, token);
  // Pause the whole queue for as long as the store asked, or until the next login may be tried; the job
  // goes back to waiting without spending an attempt.
  if (isPaused(run) && ctx.paused) await rt.queue.rateLimit(ctx.paused.waitMs);
  // Told once the state is settled and the job moved: whoever listens sees what the job left in Redis.
  report(rt, [run], started);
  switch (run.outcome) {
    case 'deferred':
      throw new DelayedError();
    case 'rate_limited':
    case 'auth_paused':
      throw Worker.RateLimitError();
    case 'rejected':
    case 'failed':
      if (run.permanent) throw new UnrecoverableError(run.reason);
      throw run.error;
    case 'retried':
      throw run.error;
    default:
      return { outcome: run.created ? 'created' : run.outcome === 'skipped' ? 'skipped' : 'completed', fields: run.fields };
  }
}

/**
 * A batch hands each SKU it could not finish to a job of its own; after a 429 or refused credentials it
 * keeps its unsent SKUs and goes back to wait, without spending an attempt.
 */
async function finishBatch(ctx: JobContext, runs: readonly SkuRun[], started: number): Promise<InventoryJobResult> {
  const { rt, job } = ctx;
  const isolated = runs.filter((run) => run.outcome === 'isolated' || run.outcome === 'deferred').map((run) => run.sku);
  if (isolated.length > 0) {
    await enqueueSkus(rt.queue, isolated, { ...batchOptions(rt, job), ownJobs: true, delay: rt.config.inventory.backoffMs });
  }
  const unsent = runs.filter(isPaused).map((run) => run.sku);
  if (unsent.length > 0 && ctx.paused) {
    await job.updateData({ ...job.data, skus: unsent });
    await rt.queue.rateLimit(ctx.paused.waitMs);
  }
  report(rt, runs, started);
  if (unsent.length > 0) throw Worker.RateLimitError();
  const counts: Partial<Record<JobOutcome, number>> = {};
  for (const run of runs) counts[run.outcome] = (counts[run.outcome] ?? 0) + 1;
  return { outcome: 'batch', skus: runs.length, counts, isolated };
}

/** A SKU left unsent because the store asked to slow down or refused the credentials. */
function isPaused(run: SkuRun): boolean {
  return run.outcome === 'rate_limited' || run.outcome === 'auth_paused';
}

/** How a job's SKUs are queued again: same priority and force. */
function batchOptions(rt: InventoryRuntime, job: Job<InventoryJobData>) {
  return {
    priority: job.opts.priority ?? PRIORITY.other,
    force: job.data.force === true,
    batchSize: rt.config.inventory.batchSize,
    spread: rt.config.inventory.concurrency,
  };
}

/** Counts the SKUs' outcomes (one increment per outcome, not per SKU) and tells each SKU's listeners. */
function report(rt: InventoryRuntime, runs: readonly SkuRun[], started: number): void {
  const counts = new Map<JobOutcome, number>();
  for (const run of runs) counts.set(run.outcome, (counts.get(run.outcome) ?? 0) + 1);
  for (const [outcome, count] of counts) rt.metrics.jobs.inc({ queue: QUEUE, outcome }, count);
  rt.metrics.jobDuration.observe({ queue: QUEUE }, (rt.now() - started) / 1000);
  for (const run of runs) {
    // The activity log counts these and warns of SKUs that fail for good (a flood stays a count).
    if (run.outcome === 'isolated') rt.logger.debug({ sku: run.sku }, `inventory SKU handed to a job of its own: ${run.reason ?? ''}`);
    rt.events.emit('inventory:job:done', { sku: run.sku, outcome: run.outcome, fields: run.fields, ...(run.reason === undefined ? {} : { reason: run.reason }) });
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
 * planned apart (`planStock`, a kit's `planKitStock`): the store gets the published figure, recomputed on every job.
 */
function plan(rt: InventoryRuntime, sku: string, state: SkuState, force: boolean, kit?: KitStock): Plan {
  const stock = kit ? planKitStock(state, kit, force, rt.now()) : planStock(state, force, rt.config.inventory.safetyStock, placementOf(sku, rt.config.inventory));
  const send = new Map<string, PendingRead>();
  const settled: Settlement[] = [...stock.settled];
  if (stock.send) send.set('Stock', stock.send);
  for (const [field, read] of state.pending) {
    if (isStockInput(field)) continue;
    const { entry } = read;
    const forced = force || entry.force === true;
    const applied = state.applied.get(field);
    // An equal version is the same change: resent only when forced (the reconcile saw the store differ),
    // or checked against what the store acknowledged when the snapshot diff saw the value change.
    if (applied !== undefined && (entry.version < applied || (entry.version === applied && !forced && entry.resend !== true))) {
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
  rt.logger.debug({ sku }, `inventory update refused before sending: ${reason}`);
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
