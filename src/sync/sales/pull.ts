/**
 * The sales producer: reads the store's sales of a window (or of given external references), skips
 * those still settling or already done, and adds one `sales` job per sale, keyed by site and sale id so
 * that overlapping pulls and re-runs never queue a sale twice.
 *
 * The window runs from `lookbackHours` before the last complete pull (the watermark, UTC in Redis) to
 * one day after now, as calendar days in the store's zone: a sale of 23:30 local time, or one stamped
 * by a store clock running ahead, is always inside it.
 *
 * With `inventory.sites` a pull reads each site in turn, with its own watermark (pull-sites.ts says
 * which sites, and what a failing one does); a sale is keyed by the site it was read from. Each site's
 * sales are reserved as it is read, and the Codes whose reservations changed are queued once, after the
 * last site: a figure written in between would ignore the sales of the sites not read yet, and overwrite
 * the decrement the store made for them.
 */
import { storeInstant } from '../../erp/sinks/sale-rows.js';
import { formatQueryDate } from '../../store/dates.js';
import type { RecordReject } from '../../store/records.js';
import type { SaleIterateOptions } from '../../store/sales.js';
import type { Sale } from '../../store/schemas/index.js';
import { waitFor } from '../../wait-for.js';
import type { FlowDeps } from '../flow.js';
import { reservationPullStatuses, unreadKitSources } from '../inventory/listing/index.js';
import { updatePendingGauge } from './export-sale.js';
import { pullEachSite, pullSites } from './pull-sites.js';
import { openSalesRuntime, type SalesRuntime } from './runtime.js';
import type { SaleKey } from './sale-state.js';
import type { PullAction, PullReport, SalesJobData } from './types.js';

/** Options of a pull. */
export interface PullOptions {
  /** First day of the window, `YYYY-MM-DD` in the store's zone (default: see the module comment). */
  from?: string;
  /** Last day of the window, `YYYY-MM-DD` (default: tomorrow in the store's zone). */
  to?: string;
  /** Statuses to pull (default `sales.pull.statuses`). */
  statuses?: number[];
  /** Report what would be queued without queueing or recording anything. */
  dryRun?: boolean;
  /**
   * Pull these sales by `external_reference` and site instead of by status and window; statuses and
   * the settle delay do not apply (they were asked for by name).
   */
  externalReferences?: string[];
}

const DAY_MS = 86_400_000;

/** The BullMQ job id of a sale (custom ids may not contain ":"). */
export function saleJobId(key: SaleKey): string {
  return `sale-${key.siteId}-${key.saleId}`;
}

/** The job name shown in the dashboard. */
export function saleJobName(key: SaleKey): string {
  return `sale:${key.siteId}:${key.saleId}`;
}

function snapshot(sale: Sale): SalesJobData['snapshot'] {
  const customer = [sale.UserData?.FirstName, sale.UserData?.LastName].filter(Boolean).join(' ');
  return {
    status: sale.Status ?? null,
    total: sale.Total ?? null,
    creationDate: sale.CreationDate === null || sale.CreationDate === undefined ? null : String(sale.CreationDate),
    externalReference: sale.ExternalReference ?? null,
    customer: customer === '' ? null : customer,
  };
}

/** The sales to look at: by window and status, or by external reference. */
async function* salesToPull(
  rt: SalesRuntime,
  options: PullOptions,
  query: { siteId: number | null; statuses: number[]; from: string | null; to: string | null },
  read: SaleIterateOptions,
): AsyncGenerator<Sale> {
  const siteFilter = query.siteId === null ? {} : { siteId: query.siteId };
  if (options.externalReferences) {
    for (const externalReference of options.externalReferences) {
      yield* await rt.store.sales.list({ externalReference, ...siteFilter }, read);
    }
    return;
  }
  yield* rt.store.sales.iterate(
    {
      status: query.statuses,
      ...siteFilter,
      ...(query.from === null ? {} : { from: query.from }),
      ...(query.to === null ? {} : { to: query.to }),
      pageSize: rt.config.sales.pull.pageSize,
      maxPages: rt.config.sales.pull.maxPages,
    },
    read,
  );
}

/** Runs one pull on an open runtime, one read per site; see the module comment. */
export async function runPull(rt: SalesRuntime, options: PullOptions = {}): Promise<PullReport> {
  if (rt.kits !== undefined && options.dryRun !== true) await kitsRead(rt);
  const startedAt = rt.now();
  const sites = pullSites(rt.config);
  let report: PullReport;
  try {
    report = await pullEachSite(sites, (siteId) => pullSite(rt, options, { siteId, perSite: sites.perSite, startedAt }), rt.logger);
  } finally {
    // Once every site was read (or tried: a failed site's sales wait for the next pull, as before).
    if (options.dryRun !== true) await rt.reservations?.requeue();
  }
  // Every site read: the kits, which wait for the deployment's first such pull, are queued (once).
  const { kits } = rt;
  if (options.dryRun !== true && kits !== undefined) await rt.reservations?.pulled(async () => [...(await kits.all()).keys()]);
  if (!report.dryRun) rt.metrics.markSuccess('sales');
  // The activity log writes the line of a pull that queued something (sales:pull:done).
  rt.logger.debug({ ...report, sales: undefined }, report.dryRun ? 'sales pull (dry run)' : 'sales pulled');
  return report;
}

/** How long a pull waits for the kits sources' first complete read (read at start, on the inventory side). */
const KITS_READ_WAIT_MS = 30_000;

/**
 * Waits until every kits source has completed a read on this prefix. Before that a kit sold would be taken
 * for a plain code: its components not reserved, and no later read of the composition would reserve them.
 * Once read, the composition stays in Redis: only a deployment's first start waits. A source that still has
 * no complete read after KITS_READ_WAIT_MS fails the pull, naming it; the next pull tries again.
 */
async function kitsRead(rt: SalesRuntime): Promise<void> {
  const sources = rt.config.inventory.kits.filter((source) => source.enabled).map((source) => source.name);
  let unread: string[] = [];
  await waitFor(
    async () => {
      unread = await unreadKitSources(rt.redis, rt.config.redis.prefix, sources);
      return unread.length === 0;
    },
    { timeoutMs: KITS_READ_WAIT_MS, intervalMs: 250, message: 'the kits sources' },
  ).catch(() => {
    throw new Error(`sales pull waits for the first complete read of kits source(s) ${unread.join(', ')}: a kit sold before its composition is known could not reserve its components`);
  });
}

/** What one site's read works with. */
interface SiteRead {
  /** The `siteId` filter sent (null: none); a sale's key takes it, else the sale's own SiteId. */
  siteId: number | null;
  /** Skip sales naming another site (see `PullSites.perSite`). */
  perSite: boolean;
  startedAt: number;
}

/** Reads one site, queues its sales and, on a scheduled pull whose paging completed, moves its watermark. */
async function pullSite(rt: SalesRuntime, options: PullOptions, { siteId, perSite, startedAt }: SiteRead): Promise<PullReport> {
  const { config } = rt;
  const timeZone = config.store.timeZone;
  const byReference = options.externalReferences !== undefined;
  // A scheduled pull moves the watermark; a pull of a chosen window or of chosen sales does not.
  const scheduled = !byReference && options.from === undefined && options.to === undefined;
  const dryRun = options.dryRun ?? false;
  const statuses = options.statuses ?? config.sales.pull.statuses;
  // Reservations need every reserving and cancelled sale, even when fewer statuses are exported.
  const reserving = rt.reservations !== undefined && !dryRun;
  const queried = reserving ? [...new Set([...statuses, ...reservationPullStatuses(config)])] : statuses;
  const observed: Array<{ siteId: number; sale: Sale; since: number }> = [];
  const watermarkKey = siteId ?? 0;

  let from: string | null = null;
  let to: string | null = null;
  if (!byReference) {
    const watermark = scheduled ? await rt.state.watermark(watermarkKey) : null;
    const start = Math.min(startedAt, watermark ?? startedAt) - config.sales.pull.lookbackHours * 3_600_000;
    from = options.from === undefined ? formatQueryDate(new Date(start), timeZone) : formatQueryDate(options.from, timeZone);
    to = options.to === undefined ? formatQueryDate(new Date(startedAt + DAY_MS), timeZone) : formatQueryDate(options.to, timeZone);
  }
  const report: PullReport = {
    dryRun,
    siteId,
    siteIds: siteId === null ? [] : [siteId],
    from,
    to,
    statuses: byReference ? [] : statuses,
    seen: 0,
    queued: 0,
    alreadyQueued: 0,
    retried: 0,
    refused: 0,
    done: 0,
    skippedSettling: 0,
    skippedStatus: 0,
    skippedSite: 0,
    rejected: 0,
    pagingStopped: null,
    sales: [],
  };

  const settleMs = config.sales.pull.settleMinutes * 60_000;
  const candidates: Array<{ key: SaleKey; sale: Sale; since: number }> = [];
  const seen = new Set<string>();
  const note = (key: SaleKey, sale: Sale, action: PullAction): void => {
    if (!dryRun) return;
    report.sales.push({
      ...key,
      status: sale.Status ?? null,
      creationDate: snapshot(sale)?.creationDate ?? null,
      total: sale.Total ?? null,
      action,
    });
  };

  const rejects: RecordReject[] = [];
  const read: SaleIterateOptions = {
    onReject: (reject) => void rejects.push(reject),
    onPagingStop: (stop) => void (report.pagingStopped = stop.reason),
  };
  for await (const sale of salesToPull(rt, options, { siteId, statuses: queried, from, to }, read)) {
    if (perSite && typeof sale.SiteId === 'number' && sale.SiteId > 0 && sale.SiteId !== siteId) {
      report.skippedSite += 1;
      continue;
    }
    const key: SaleKey = { siteId: siteId ?? sale.SiteId ?? 0, saleId: sale.Id };
    const id = `${key.siteId}:${key.saleId}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const created = storeInstant(sale.CreationDate, timeZone)?.getTime() ?? null;
    if (reserving) observed.push({ siteId: key.siteId, sale, since: created ?? startedAt });
    // A sale read only for its reservation is not this pull's business otherwise.
    if (!byReference && typeof sale.Status === 'number' && !statuses.includes(sale.Status) && queried.includes(sale.Status)) continue;
    report.seen += 1;
    // A store that ignores the status filter must not get other sales exported.
    if (!byReference && typeof sale.Status === 'number' && !statuses.includes(sale.Status)) {
      report.skippedStatus += 1;
      note(key, sale, 'other-status');
      continue;
    }
    if (!byReference && settleMs > 0 && created !== null && startedAt - created < settleMs) {
      report.skippedSettling += 1;
      note(key, sale, 'settling');
      continue;
    }
    candidates.push({ key, sale, since: created ?? startedAt });
  }

  // Reserved before any job is queued: a crash from here on loses no reservation.
  // Their Codes are queued once every site was read (runPull).
  if (reserving && rt.reservations) await rt.reservations.record(observed);
  const states = await rt.state.getMany(candidates.map((c) => c.key));
  const pending: Array<SaleKey & { since: number }> = [];
  for (const [index, candidate] of candidates.entries()) {
    const state = states[index] ?? null;
    const { key, sale } = candidate;
    if (state?.state === 'acked' || (state?.state === 'exported' && !config.sales.ack.enabled)) {
      report.done += 1;
      note(key, sale, 'done');
      continue;
    }
    pending.push({ ...key, since: candidate.since });
    const existing = await rt.queue.getJob(saleJobId(key));
    if (existing) {
      // A job that used up its attempts while the ERP was down is given fresh attempts by the next pull
      // that still sees the sale unacknowledged, so a long outage heals by itself. One that failed before
      // its attempts ran out was refused (UnrecoverableError: a 4xx, a constraint): trying it again on
      // every pull would repeat the refusal, so it stays failed, with its reason, for an admin.
      const failed = await existing.isFailed();
      if (failed && existing.attemptsMade < (existing.opts.attempts ?? 1)) {
        report.refused += 1;
        note(key, sale, 'refused');
        continue;
      }
      if (!dryRun && failed) {
        await existing.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        report.retried += 1;
        note(key, sale, 'retried');
        continue;
      }
      report.alreadyQueued += 1;
      note(key, sale, 'queued-before');
      continue;
    }
    if (!dryRun) {
      await rt.queue.add(saleJobName(key), { ...key, snapshot: snapshot(sale) }, { jobId: saleJobId(key) });
    }
    report.queued += 1;
    note(key, sale, state ? 'ack' : 'export');
  }

  report.rejected = rejects.length;
  if (!dryRun) {
    // A rejected sale is read again by every pull (its entry stays one); one that reads fine now is cleared.
    await rt.storeRejects.park(rejects);
    await rt.storeRejects.clear('sale', [...seen].map((id) => id.slice(id.indexOf(':') + 1)));
    await rt.state.addPending(pending);
    await updatePendingGauge(rt);
    // Paging cut short by a guard may have missed sales: the next pull starts from the same place.
    if (scheduled && report.pagingStopped === null) await rt.state.setWatermark(watermarkKey, startedAt);
  }
  return report;
}

/** Pulls sales once (dashboard control queue, CLI): opens what it needs and closes it again. */
export async function pullSales(deps: FlowDeps, options: PullOptions = {}): Promise<PullReport> {
  const rt = openSalesRuntime(deps);
  try {
    return await runPull(rt, options);
  } finally {
    await rt.close();
  }
}
