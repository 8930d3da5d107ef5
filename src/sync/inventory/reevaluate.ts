/**
 * A configuration change reaches the store (issue 28). At the start of an inventory flow, when the
 * settings that decide what a target shows (`target-settings.ts`) differ from those of the last start,
 * one pass walks the targets' ERP state in Redis in chunks (SCAN, memory independent of the catalog)
 * and queues each stock target whose figure under the current settings differs from what the store
 * acknowledged; the targets of failed jobs are queued again too (a write the store refused under the
 * old settings) and their failed jobs removed. Nothing is re-read from the ERP and nothing unchanged
 * is re-sent. A change of a setting that moves no figure (`inventory.createMissing`) only queues the
 * failed jobs' targets again. What Redis cannot tell (a source's `stockRounding`, a site added, a price
 * list's id moved) is left to a reconcile of the sources concerned, queued by the pass
 * (`settings-reconcile.ts`).
 *
 * A queued target gets a copy of its newest ERP stock (and safety stock) as a pending entry flagged
 * `resend`, as the snapshot diff does: the worker then compares the figure it computes with the one
 * the store acknowledged instead of skipping a version the store already took, and writes only when
 * they differ. A site added to `inventory.sites` is reconciled; when some enabled source cannot be
 * (no snapshot), the site gets, per Code, the ERP stock of a site listed before (or of the default
 * target, when no site was) as well: the stock of a record naming no site is the same on every site. A
 * site removed is no longer written. One process runs the pass (a lock under the prefix); the settings
 * are recorded once it has finished, so a pass cut short runs again.
 */
import { randomUUID } from 'node:crypto';

import type { Job } from 'bullmq';

import { stateKey } from '../../queue/connection.js';
import { RELEASE_IF_OWNER, RENEW_IF_OWNER } from '../../queue/redis-lock.js';
import { enqueueSkus, PRIORITY } from './enqueue.js';
import { newestEntry, placementOf, planStock, SAFETY_FIELD } from './listing/index.js';
import type { InventoryRuntime } from './runtime.js';
import { coversEverySource, describeReconciles, queueReconciles, reconcilePlan } from './settings-reconcile.js';
import { globEscape } from './snapshot/index.js';
import { scannedServers, type SkuState } from './state.js';
import { homeSiteOf, homeTargetOf, keyOf, siteIdsOf, targetParts } from './target-key.js';
import { changedSettings, figuresChanged, roundingChanged, SettingsRecord, settingsSites, type TargetSettings, targetSettings } from './target-settings.js';
import { type InventoryJobData, jobSkus, type PendingEntry, type ReevaluateReport } from './types.js';

/** Keys per SCAN call and targets per read. */
const CHUNK = 500;
/** The pass's lock lives this long unless renewed (it is, after every chunk). */
const LOCK_TTL_MS = 60_000;

/**
 * Runs the pass if the settings changed since the last start; undefined when another process holds
 * the pass's lock (it runs it). `signal` stops it between chunks (the settings are then not recorded).
 */
export async function reevaluateOnStart(rt: InventoryRuntime, signal?: AbortSignal): Promise<ReevaluateReport | undefined> {
  const prefix = rt.config.redis.prefix;
  const lockKey = stateKey(prefix, 'inv', 'settings', 'lock');
  const owner = randomUUID();
  if ((await rt.redis.set(lockKey, owner, 'PX', LOCK_TTL_MS, 'NX')) !== 'OK') return undefined;
  const renew = async (): Promise<void> => {
    await rt.redis.eval(RENEW_IF_OWNER, 1, lockKey, owner, LOCK_TTL_MS);
  };
  try {
    const record = new SettingsRecord(rt.redis, prefix);
    const before = await record.read();
    const now = targetSettings(rt.config);
    const report: ReevaluateReport = { changed: before ? changedSettings(before, now) : [], targets: 0, queued: 0, newSiteTargets: 0, failedRequeued: 0, reconciles: [], notReconciled: [] };
    if (before && report.changed.length > 0) {
      const plan = reconcilePlan(rt, before, now, report.changed);
      // A rounding change alone moves no figure already read: the reconcile re-reads them. A change of
      // whether the store takes a write (createMissing) moves no figure either: only refused writes are
      // tried again. A site added that the reconcile covers is left to it (a copy would race its writes).
      // The targets the walk queues: a failed job of one of them is superseded by that new job.
      const walked = new Set<string>();
      if (figuresChanged(report.changed)) await queueChangedTargets(rt, before, report, { copyToAdded: !coversEverySource(rt, plan), renew, walked }, signal);
      if (roundingChanged(report.changed).length < report.changed.length) await requeueFailed(rt, report, renew, walked, signal);
      if (signal?.aborted) return report;
      await queueReconciles(rt, plan, report);
      log(rt, report);
    }
    await record.write(now);
    rt.events.emit('inventory:reevaluate:done', report);
    return report;
  } finally {
    await rt.redis.eval(RELEASE_IF_OWNER, 1, lockKey, owner);
  }
}

/** Walks every target's ERP state and queues the stock targets whose figure changed, and new sites' targets. */
async function queueChangedTargets(
  rt: InventoryRuntime,
  before: TargetSettings,
  report: ReevaluateReport,
  { copyToAdded, renew, walked }: { copyToAdded: boolean; renew: () => Promise<void>; walked: Set<string> },
  signal?: AbortSignal,
): Promise<void> {
  await rt.state.ensureLayout();
  const base = `${stateKey(rt.config.redis.prefix, 'inv', 'target')}:`;
  const sites = siteIdsOf(rt.config.inventory);
  const oldSites = settingsSites(before);
  // The home site (store.siteId listed) keeps the bare-Code keys: listed for the first time, it is no new
  // site but the copy those keys wrote all along, re-evaluated like any other.
  const home = homeSiteOf(rt.config);
  const added = sites.filter((siteId) => !oldSites.includes(siteId) && !(siteId === home && oldSites.length === 0));
  // The targets a new site's stock is copied from (by their keys in Redis): a site listed before, or the default target.
  const donor = (key: string): boolean => holdsStock(key) && targetParts(key).siteId === oldSites[0];
  for (const server of scannedServers(rt.redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', `${globEscape(base)}*`, 'COUNT', CHUNK);
      cursor = next;
      await queueChunk(rt, keys.map((key) => key.slice(base.length)), { sites, added, copyToAdded, donor, home, walked }, report);
      await renew();
    } while (cursor !== '0' && !signal?.aborted);
  }
}


/** One chunk of the walk: the stock targets whose figure changed, and new sites' targets from their donors. */
async function queueChunk(
  rt: InventoryRuntime,
  keys: readonly string[],
  {
    sites,
    added,
    copyToAdded,
    donor,
    home,
    walked,
  }: { sites: readonly number[]; added: readonly number[]; copyToAdded: boolean; donor: (key: string) => boolean; home: number | undefined; walked: Set<string> },
  report: ReevaluateReport,
): Promise<void> {
  // A key in Redis is a target's, but the home site's targets are kept under the bare Codes.
  const stored = new Map(keys.map((key) => [homeTargetOf(key, home), key]));
  const states = await rt.state.readMany([...stored.keys()]);
  report.targets += keys.length;
  const merges: Array<{ sku: string; entries: Record<string, PendingEntry> }> = [];
  const priorities = new Map<string, number>();
  for (const [key, state] of states) {
    // A new site's targets are queued from their donors below (SCAN may also return the ones made here).
    if (!isWritten(key, sites) || !holdsStock(key) || added.includes(targetParts(key).siteId ?? 0)) continue;
    const priority = stockChange(rt, key, state);
    if (priority === undefined) continue;
    merges.push({ sku: key, entries: stockEntries(state) });
    priorities.set(key, priority);
  }
  if (copyToAdded && added.length > 0) {
    for (const [key, state] of states) {
      if (!donor(stored.get(key) ?? key)) continue;
      const entries = stockEntries(state);
      if (Object.keys(entries).length === 0) continue;
      for (const siteId of added) {
        const target = keyOf({ code: targetParts(key).code, siteId });
        merges.push({ sku: target, entries });
        priorities.set(target, PRIORITY.increase);
        report.newSiteTargets += 1;
      }
    }
  }
  await rt.state.merge(merges);
  report.queued += await enqueueSkus(rt.queue, [...priorities.keys()], { priorities, batchSize: rt.config.inventory.batchSize, spread: rt.config.inventory.concurrency });
  for (const key of priorities.keys()) walked.add(key);
}

/**
 * True for a target the current settings write: with sites listed, a target of one of them (not the
 * default target, nor a site removed); without, any.
 */
function isWritten(key: string, sites: readonly number[]): boolean {
  const { siteId } = targetParts(key);
  return sites.length === 0 || (siteId !== undefined && sites.includes(siteId));
}

/** True for a target holding stock (not a price list's). */
function holdsStock(key: string): boolean {
  return targetParts(key).priceListId === undefined;
}

/**
 * The job priority of a target whose published figure under the current settings (as the worker
 * computes it) differs from what the store acknowledged; undefined when it does not, or has no figure.
 */
function stockChange(rt: InventoryRuntime, key: string, state: SkuState): number | undefined {
  const { inventory } = rt.config;
  const figure = planStock(state, true, inventory.safetyStock, placementOf(key, inventory)).computed?.published;
  if (figure === undefined) return undefined;
  const acked = state.acked.get('Stock');
  if (acked === figure) return undefined;
  return typeof acked === 'number' && figure < acked ? PRIORITY.decrease : PRIORITY.increase;
}

/** The newest ERP stock and safety stock of a target, flagged `resend` (the worker checks them against the store). */
function stockEntries(state: SkuState): Record<string, PendingEntry> {
  const entries: Record<string, PendingEntry> = {};
  for (const field of ['Stock', SAFETY_FIELD]) {
    const newest = newestEntry(state.erp.get(field), state.pending.get(field)?.entry);
    if (newest) entries[field] = { ...newest, resend: true };
  }
  return entries;
}

/**
 * Queues again the targets of the inventory queue's failed jobs (their values are still pending when
 * the store refused them), with their stock checked as above, and removes each failed job whose targets
 * were queued: the new job's outcome is what the dashboard and `inventory explain` show from now on.
 */
async function requeueFailed(rt: InventoryRuntime, report: ReevaluateReport, renew: () => Promise<void>, walked: ReadonlySet<string>, signal?: AbortSignal): Promise<void> {
  const sites = siteIdsOf(rt.config.inventory);
  // A job queued before the sites were listed names the bare Code: the home site's target, as the worker reads it.
  const home = homeSiteOf(rt.config);
  const targetsOf = (job: Job<InventoryJobData>): string[] => jobSkus(job.data).map((sku) => homeTargetOf(sku, home));
  // Jobs that fail from now on (the ones queued here, refused again) are left alone.
  const startedAt = rt.now();
  const done = new Map<string, Job<InventoryJobData>>();
  for (let start = 0; !signal?.aborted; start += CHUNK) {
    const page = (await rt.queue.getFailed(start, start + CHUNK - 1)).filter((job) => Boolean(job));
    if (page.length === 0) break;
    const jobs = page.filter((job) => (job.finishedOn ?? 0) <= startedAt && !done.has(String(job.id)));
    const states = await rt.state.readMany([...new Set(jobs.flatMap(targetsOf))]);
    const merges: Array<{ sku: string; entries: Record<string, PendingEntry> }> = [];
    const priorities = new Map<string, number>();
    for (const [key, state] of states) {
      if (!isWritten(key, sites)) continue;
      const stock = holdsStock(key) ? stockChange(rt, key, state) : undefined;
      if (stock !== undefined) merges.push({ sku: key, entries: stockEntries(state) });
      // Nothing pending and the stock right: nothing to write (a value refused before sending left).
      if (stock === undefined && state.pending.size === 0) continue;
      priorities.set(key, stock ?? PRIORITY.other);
    }
    await rt.state.merge(merges);
    await enqueueSkus(rt.queue, priorities.keys(), { priorities, batchSize: rt.config.inventory.batchSize, spread: rt.config.inventory.concurrency });
    // A target the walk queued already has its new job (which may even have run by now, so its state reads settled).
    for (const job of jobs) if (targetsOf(job).some((sku) => priorities.has(sku) || walked.has(sku))) done.set(String(job.id), job);
    await renew();
  }
  for (const job of done.values()) {
    // Retried by hand meanwhile, or already gone: the job is someone else's now.
    await job.remove().catch((error: unknown) => rt.logger.debug({ err: error, jobId: job.id }, 'failed inventory job not removed'));
  }
  report.failedRequeued = done.size;
}

/** The one line an operator reads about the pass (the settings' names, never their values). */
function log(rt: InventoryRuntime, report: ReevaluateReport): void {
  const { changed, targets, queued, newSiteTargets, failedRequeued, reconciles, notReconciled } = report;
  rt.logger.info(
    { changed, targets, queued, newSiteTargets, failedRequeued, reconciles, notReconciled },
    `inventory settings changed since the last start (${changed.join(', ')}): ${queued} of ${targets} targets queued to be written` +
      `${newSiteTargets > 0 ? ` (${newSiteTargets} on sites added)` : ''}, ${failedRequeued} failed jobs queued again${describeReconciles(report)}`,
  );
}
