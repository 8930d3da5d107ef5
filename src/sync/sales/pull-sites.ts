/**
 * Which sites a sales pull reads, and one pull made of a read per site (issue 20: "the sales pull reads
 * every site of `inventory.sites`, so that no site's sales go unseen"). The reading itself is pull.ts's;
 * this module knows only the sites, the order, the failures and how the reports add up.
 *
 * A site's read queues its sales and moves its own watermark before the next site is read, so a site
 * the store fails on costs the others nothing. The pull still throws once every site was tried: the
 * scheduler logs it at error level and `sales:pull:failed` fires, and the failing site's window is read
 * again by the next pull.
 */
import type { Config } from '../../config/schema.js';
import { StoreSyncError, withContext } from '../../errors.js';
import type { Logger } from '../../log.js';
import { siteIdsOf } from '../inventory/target-key.js';
import { isLoginHold } from '../job-errors.js';
import type { PullReport } from './types.js';

/** The sites one pull reads. */
export interface PullSites {
  /** In the order read; null: one read without a `siteId` filter (the store answers every site). */
  siteIds: Array<number | null>;
  /**
   * True when the sites come from `inventory.sites`: each read keeps only the sales of the site it
   * asked for, so a store that ignores the filter does not get a sale queued under several sites.
   */
  perSite: boolean;
}

/**
 * `sales.pull.siteId` alone when set (one puller per site); else every site of `inventory.sites`, and
 * `store.siteId` after them when it is not among them (its sales were pulled before and still are);
 * else `store.siteId`, else one read of all sites.
 */
export function pullSites(config: Readonly<Config>): PullSites {
  const explicit = config.sales.pull.siteId;
  if (explicit !== undefined) return { siteIds: [explicit], perSite: false };
  const own = config.store.siteId ?? null;
  const listed = siteIdsOf(config.inventory);
  if (listed.length === 0) return { siteIds: [own], perSite: false };
  return { siteIds: own === null || listed.includes(own) ? listed : [...listed, own], perSite: true };
}

/** A site's read that threw. */
interface SiteFailure {
  siteId: number | null;
  error: unknown;
}

/**
 * Reads each site with `pullSite`, in order, and adds their reports up. A site that throws is logged
 * and the next one read; after the last, the first failure is thrown, its message naming the failed
 * sites and what the others queued (a store error keeps its class and code). A refused or deferred
 * login stops at once: every other site would meet it too.
 */
export async function pullEachSite(
  sites: PullSites,
  pullSite: (siteId: number | null) => Promise<PullReport>,
  logger: Logger,
): Promise<PullReport> {
  const reports: PullReport[] = [];
  const failures: SiteFailure[] = [];
  for (const siteId of sites.siteIds) {
    try {
      reports.push(await pullSite(siteId));
    } catch (error) {
      if (sites.siteIds.length === 1 || isLoginHold(error)) throw error;
      logger.warn({ siteId, err: (error as Error).message }, 'sales pull of one site failed; the other sites are still read');
      failures.push({ siteId, error });
    }
  }
  if (failures.length > 0) throw siteFailure(failures, reports);
  return mergeReports(reports);
}

/** `site 2` or `sites 1, 3`. */
const naming = (siteIds: ReadonlyArray<number | null>): string => `${siteIds.length > 1 ? 'sites' : 'site'} ${siteIds.map((id) => id ?? 'any').join(', ')}`;

function siteFailure(failures: readonly SiteFailure[], reports: readonly PullReport[]): Error {
  const [first] = failures as [SiteFailure, ...SiteFailure[]];
  const queued = reports.reduce((sum, report) => sum + report.queued, 0);
  const pulled = reports.length === 0 ? 'no site pulled' : `${naming(reports.map((report) => report.siteId))} pulled, ${queued} queued`;
  const what = `sales pull of ${naming(failures.map((failure) => failure.siteId))} failed (${pulled})`;
  if (first.error instanceof StoreSyncError) return withContext(first.error, what);
  return new Error(`${what}: ${first.error instanceof Error ? first.error.message : String(first.error)}`, { cause: first.error });
}

const COUNTERS = ['seen', 'queued', 'alreadyQueued', 'retried', 'refused', 'done', 'skippedSettling', 'skippedStatus', 'skippedSite', 'rejected'] as const;

/** One report of several sites' reports: the counters summed, the window from the earliest start to the latest end. */
export function mergeReports(reports: readonly PullReport[]): PullReport {
  const [first, ...rest] = reports as [PullReport, ...PullReport[]];
  if (rest.length === 0) return first;
  const merged: PullReport = { ...first, siteId: null, siteIds: reports.flatMap((report) => report.siteIds), sales: [...first.sales] };
  for (const report of rest) {
    for (const counter of COUNTERS) merged[counter] += report[counter];
    if (report.from !== null && (merged.from === null || report.from < merged.from)) merged.from = report.from;
    if (report.to !== null && (merged.to === null || report.to > merged.to)) merged.to = report.to;
    merged.pagingStopped ??= report.pagingStopped;
    merged.sales.push(...report.sales);
  }
  return merged;
}
