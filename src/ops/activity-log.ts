/**
 * What the flows did, as log lines an operator can read: one `info` line per poll (or diff) of a source
 * that moved something, one `info` summary per interval while work flows, and one `warn` per record or
 * job refused or failed for good, naming the SKU or sale and the reason. It subscribes to the flows'
 * lifecycle events; the flows themselves log only at debug level for each item.
 *
 * A flood (a store answering 404 to a thousand SKUs, a bad ERP export) collapses into counts: each kind
 * of per-item line has a budget per interval, and the lines past it are counted and reported by the
 * next summary ("N more like this suppressed"), so the log stays at a few lines a second at most.
 */
import type { TypedEmitter } from '../events.js';
import type { Logger } from '../log.js';
import type { FulfillmentEvents } from '../sync/fulfillment/index.js';
import { targetLabel } from '../sync/inventory/target-key.js';
import type { InventoryEvents } from '../sync/inventory/types.js';
import type { SalesEvents } from '../sync/sales/index.js';

/** Per-item lines of one kind logged per summary interval; the rest are counted. */
export const LINES_PER_KIND = 10;

/** What one poll or diff of a source reports; the counts a kind does not have are left out. */
export interface SourceReportLike {
  source: string;
  /** `poll` (changes since a cursor) or `diff` (a snapshot compared with the last one). */
  kind?: 'poll' | 'diff';
  /** Rows read from the source. */
  read: number;
  /** Jobs (SKUs, shipment updates) queued. */
  queued: number;
  /** Rows refused (they break a store rule). */
  rejected: number;
  /** Keys the snapshot no longer has (a diff). */
  vanished?: number;
}

/** Options of the activity log. */
export interface ActivityLogOptions {
  logger: Logger;
  /** How often the summary is written while work flows (`log.summaryIntervalMs`). @defaultValue 60000 */
  summaryIntervalMs: number;
  /** Per-item lines of a kind per interval. @defaultValue LINES_PER_KIND */
  linesPerKind?: number;
  /** Clock (ms) of the period a summary covers. @defaultValue Date.now */
  now?: () => number;
}

/** Counts of one interval, by flow. */
interface Counts {
  /** `held`: jobs held (`auth_paused`) while the store refuses the credentials; they stay queued. */
  inventory: { written: number; skipped: number; retried: number; isolated: number; failed: number; refused: number; held: number };
  sales: { exported: number; acked: number; retried: number; failed: number; held: number };
  fulfillment: { updated: number; retried: number; failed: number; refused: number; held: number };
}

function emptyCounts(): Counts {
  return {
    inventory: { written: 0, skipped: 0, retried: 0, isolated: 0, failed: 0, refused: 0, held: 0 },
    sales: { exported: 0, acked: 0, retried: 0, failed: 0, held: 0 },
    fulfillment: { updated: 0, retried: 0, failed: 0, refused: 0, held: 0 },
  };
}

/** The summary's words for held jobs, when there were any: the credentials are what to fix. */
function heldText(held: number): string {
  return held === 0 ? '' : `, ${held} held while the store refuses the credentials (auth_paused: still queued, sent once they are right)`;
}

/** The nouns of a flow's poll line. */
const QUEUED_NOUN: Record<string, string> = { inventory: 'SKUs', fulfillment: 'shipment updates' };

/** Subscribes to the flows' events and writes the operator's lines. `close()` writes the last summary. */
export class ActivityLog {
  readonly #logger: Logger;
  readonly #linesPerKind: number;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;
  /** When the period the next summary covers began. */
  #periodStart: number;
  readonly #unsubscribe: Array<() => void> = [];
  #counts = emptyCounts();
  /** Lines written and suppressed this interval, per kind. */
  #written = new Map<string, number>();
  #suppressed = new Map<string, number>();

  constructor(options: ActivityLogOptions) {
    this.#logger = options.logger;
    this.#linesPerKind = options.linesPerKind ?? LINES_PER_KIND;
    this.#now = options.now ?? Date.now;
    this.#periodStart = this.#now();
    this.#timer = setInterval(() => this.summarize(), options.summaryIntervalMs);
    this.#timer.unref();
  }

  /** Logs the inventory flow: its polls and snapshot diffs, failed and refused SKUs, and counts for the summary. */
  watchInventory(events: TypedEmitter<InventoryEvents>): void {
    this.watchSourceReports(events, 'inventory:poll:done', 'inventory');
    // One line per snapshot diff that moved something (issue 22); a hold is an error line of its own.
    this.#on(events, 'inventory:diff:done', (report) => {
      if (report.queued + report.vanished + report.held + report.deleted === 0) return;
      this.#logger.info(
        { flow: 'inventory', kind: 'diff', ...report },
        `snapshot diff of ${report.source}: ${report.read} rows read, ${report.changed} changed, ${report.queued} SKUs queued, ${report.vanished} vanished, ${report.held} held, ${report.deleted} deleted, ${report.refused} refused`,
      );
    });
    this.#on(events, 'inventory:record:refused', ({ source, sku, reason }) => {
      this.#counts.inventory.refused += 1;
      this.#limited('inventory:record:refused', () => this.#logger.warn({ source, sku }, `ERP record refused: ${reason}`));
    });
    this.#on(events, 'inventory:job:done', ({ sku, outcome, reason }) => {
      const counts = this.#counts.inventory;
      if (outcome === 'completed') counts.written += 1;
      else if (outcome === 'skipped') counts.skipped += 1;
      else if (outcome === 'retried') counts.retried += 1;
      else if (outcome === 'isolated') counts.isolated += 1;
      else if (outcome === 'auth_paused') counts.held += 1;
      else if (outcome === 'failed' || outcome === 'rejected') {
        counts.failed += 1;
        // A target other than a Code's default one, as people read it: `SKU-1 (site 2, price list 7)`.
        const target = targetLabel(sku);
        const why = namingSubject(reason ?? 'no reason given', `SKU ${target}`);
        this.#limited('inventory:job:failed', () => this.#logger.warn({ sku: target, outcome }, `inventory job failed for good: ${why}`));
      }
    });
  }

  /** Logs the sales flow: pulls that queued something, sales failed for good, and counts. */
  watchSales(events: TypedEmitter<SalesEvents>): void {
    this.#on(events, 'sales:pull:done', (report) => {
      if (report.queued + report.retried + report.rejected === 0) return;
      // Which sites only when several were read: one site's line reads as it always did.
      const sites = report.siteIds.length > 1 ? ` (sites ${report.siteIds.join(', ')})` : '';
      this.#logger.info(
        { flow: 'sales', kind: 'pull', siteIds: report.siteIds, seen: report.seen, queued: report.queued, retried: report.retried, rejected: report.rejected },
        `sales pull${sites}: ${report.seen} sales seen, ${report.queued} queued, ${report.retried} retried, ${report.rejected} set aside`,
      );
    });
    this.#on(events, 'sales:exported', () => void (this.#counts.sales.exported += 1));
    this.#on(events, 'sales:acked', () => void (this.#counts.sales.acked += 1));
    this.#on(events, 'sales:job:held', () => void (this.#counts.sales.held += 1));
    this.#on(events, 'sales:job:failed', ({ saleId, siteId, error, willRetry }) => {
      if (willRetry) {
        this.#counts.sales.retried += 1;
        return;
      }
      this.#counts.sales.failed += 1;
      const why = namingSubject(error.message, `sale ${siteId}-${saleId}`);
      this.#limited('sales:job:failed', () => this.#logger.warn({ saleId, siteId }, `sale failed for good: ${why}`));
    });
  }

  /** Logs the fulfillment flow: its polls, updates failed for good, and counts. */
  watchFulfillment(events: TypedEmitter<FulfillmentEvents>): void {
    this.watchSourceReports(events, 'fulfillment:poll:done', 'fulfillment');
    this.#on(events, 'fulfillment:record:refused', ({ source, reason }) => {
      this.#counts.fulfillment.refused += 1;
      this.#limited('fulfillment:record:refused', () => this.#logger.warn({ source }, `shipment record refused: ${reason}`));
    });
    this.#on(events, 'fulfillment:job:held', () => void (this.#counts.fulfillment.held += 1));
    this.#on(events, 'fulfillment:job:done', ({ outcome }) => {
      if (outcome === 'updated') this.#counts.fulfillment.updated += 1;
    });
    this.#on(events, 'fulfillment:job:failed', ({ saleId, error, willRetry }) => {
      if (willRetry) {
        this.#counts.fulfillment.retried += 1;
        return;
      }
      this.#counts.fulfillment.failed += 1;
      const why = namingSubject(error.message, `sale ${saleId}`);
      this.#limited('fulfillment:job:failed', () => this.#logger.warn({ saleId }, `shipment update failed for good: ${why}`));
    });
  }

  /**
   * Writes one `info` line for each report of `event` that moved something (rows queued or refused, keys
   * vanished); a poll that found nothing new stays quiet. Any source report fits, a diff's too.
   */
  watchSourceReports<Events extends Record<string, unknown>, K extends keyof Events & string>(
    events: TypedEmitter<Events>,
    event: K,
    flow: string,
  ): void {
    this.#on(events, event, (payload) => this.sourceReport(flow, payload as SourceReportLike));
  }

  /** The line of one poll or diff (see `watchSourceReports`). */
  sourceReport(flow: string, report: SourceReportLike): void {
    const vanished = report.vanished ?? 0;
    if (report.queued + report.rejected + vanished === 0) return;
    const kind = report.kind ?? 'poll';
    const parts = [`${report.read} rows read`, `${report.queued} ${QUEUED_NOUN[flow] ?? 'jobs'} queued`];
    if (report.vanished !== undefined) parts.push(`${vanished} vanished`);
    parts.push(`${report.rejected} refused`);
    this.#logger.info(
      { flow, kind, source: report.source, read: report.read, queued: report.queued, refused: report.rejected, ...(report.vanished === undefined ? {} : { vanished }) },
      `${flow} ${kind}: ${parts.join(', ')}`,
    );
  }

  /** Writes the summary of the interval now, if anything flowed or was suppressed, and starts a new one. */
  summarize(): void {
    const counts = this.#counts;
    const suppressed = Object.fromEntries(this.#suppressed);
    // The last summary (at close) covers less than an interval: it says how long.
    const periodS = Math.round((this.#now() - this.#periodStart) / 1000);
    this.#periodStart = this.#now();
    this.#counts = emptyCounts();
    this.#written.clear();
    this.#suppressed.clear();
    const sections: Record<string, Record<string, number>> = {};
    for (const [flow, values] of Object.entries(counts) as Array<[string, Record<string, number>]>) {
      if (Object.values(values).some((n) => n > 0)) sections[flow] = values;
    }
    const totalSuppressed = Object.values(suppressed).reduce((sum, n) => sum + n, 0);
    if (Object.keys(sections).length === 0 && totalSuppressed === 0) return;
    const text: string[] = [];
    if (sections.inventory) {
      const c = counts.inventory;
      text.push(`inventory: ${c.written} store writes, ${c.failed} failed for good, ${c.isolated} SKUs isolated, ${c.retried} retried, ${c.refused} ERP records refused${heldText(c.held)}`);
    }
    if (sections.sales) {
      const c = counts.sales;
      text.push(`sales: ${c.exported} exported, ${c.acked} acknowledged, ${c.failed} failed for good, ${c.retried} retried${heldText(c.held)}`);
    }
    if (sections.fulfillment) {
      const c = counts.fulfillment;
      text.push(`fulfillment: ${c.updated} shipment updates, ${c.failed} failed for good, ${c.retried} retried, ${c.refused} ERP records refused${heldText(c.held)}`);
    }
    for (const [kind, n] of Object.entries(suppressed)) text.push(`${n} more like this suppressed (${kind})`);
    this.#logger.info(
      { summary: true, periodS, ...sections, ...(totalSuppressed > 0 ? { suppressed } : {}) },
      `last ${periodS} s: ${text.join('; ')}`,
    );
  }

  /** Stops listening and writes the last summary. */
  close(): void {
    clearInterval(this.#timer);
    for (const off of this.#unsubscribe.splice(0)) off();
    this.summarize();
  }

  #on<Events extends Record<string, unknown>, K extends keyof Events & string>(
    events: TypedEmitter<Events>,
    event: K,
    listener: (payload: Events[K]) => void,
  ): void {
    this.#unsubscribe.push(events.on(event, listener));
  }

  /** Runs `write` within the kind's budget of the interval; past it, counts the line as suppressed. */
  #limited(kind: string, write: () => void): void {
    const written = this.#written.get(kind) ?? 0;
    if (written < this.#linesPerKind) {
      this.#written.set(kind, written + 1);
      write();
    } else {
      this.#suppressed.set(kind, (this.#suppressed.get(kind) ?? 0) + 1);
    }
  }
}

/** `reason`, prefixed with `subject` unless it already names it (a name never twice in a message). */
function namingSubject(reason: string, subject: string): string {
  return reason.includes(subject) ? reason : `${subject}: ${reason}`;
}
