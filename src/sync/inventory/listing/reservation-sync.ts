/**
 * What makes and ends reservations (the store and rules are in `reservations.ts`):
 * - `observe`: the sales pull hands over every sale it saw; reserving statuses reserve, a negative
 *   status (cancelled, rejected: the store gave the units back) releases;
 * - `book`: the ERP says it booked sales (`storesync sales processed`, `POST /admin/sales/processed`);
 * - `check`, on `inventory.reservations.schedule`: rebuilds a missing reservation set, books what the
 *   sink reports processed (SQL: `erp_processed_at`), releases after `releaseAfterMinutes`, and
 *   refreshes the gauges.
 * Every change queues the SKUs it touched, so their published stock is recomputed. The pull's changes
 * wait until every site of the pull was read (`record`, then `requeue` once): a figure computed after
 * site 1's sales were read but before site 2's would ignore site 2's own sale, and overwrite the
 * decrement the store made for it. Meanwhile their Codes wait in Redis (`inv:resrequeue:{priority}`),
 * so a pull killed between two sites leaves them to the next pull's `requeue`.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Config } from '../../../config/schema.js';
import type { SalesSink } from '../../../erp/sinks/index.js';
import type { Logger } from '../../../log.js';
import type { Metrics } from '../../../metrics.js';
import { stateKey } from '../../../queue/connection.js';
import type { StoreClient } from '../../../store/client.js';
import type { Sale } from '../../../store/schemas/index.js';
import type { FlowDeps } from '../../flow.js';
import { enqueueSkus, openInventoryQueue, PRIORITY } from '../enqueue.js';
import { siteIdsOf, stockTargets } from '../target-key.js';
import type { InventoryJobData } from '../types.js';
import { firstSalesPullKey, type KitExploder, reservedLines, type SoldLine, soldLines } from './kits/index.js';
import { openReservationStore, type ReservationStore, type ReservedSaleKey, type SaleLines } from './reservations.js';

/** The statuses the store uses for a sale that will not be fulfilled (spec: -1 rejected, -2 cancelled). */
export const RELEASING_STATUSES: readonly number[] = [-1, -2];

/** What `observe` did. */
export interface ObserveReport {
  reserved: number;
  released: number;
}

/** What `check` did. */
export interface CheckReport {
  rebuilt: number;
  booked: number;
  expired: number;
  /** Sales outside the pull window found cancelled or rejected on the store. */
  cancelled: number;
  open: number;
}

/** Open sales older than the pull window read again from the store per round (oldest first). */
const OUT_OF_WINDOW_READS = 50;

/** Dependencies of a `ReservationSync`. */
export interface ReservationSyncDeps {
  config: Readonly<Config>;
  /** A connection the sync may use (not closed by it). */
  redis: Redis;
  logger: Logger;
  metrics: Metrics;
  /** Reads sales again on a rebuild. */
  store: StoreClient;
  now: () => number;
  /** The kits of `inventory.kits`: a kit line reserves its components. Unset: no kits, every line reserves its own code. */
  kits?: KitExploder;
}

/** Without `inventory.kits` no code is a kit. */
const NO_KITS: KitExploder = { explodeMany: () => Promise.resolve(new Map()) };

/** Sales the sales flow knows are not done (its pending set), read again from the store on a rebuild. */
export type PendingSales = () => Promise<ReservedSaleKey[]>;

/** The statuses the sales pull must read so that reservations see every sale they need. */
export function reservationPullStatuses(config: Readonly<Config>): number[] {
  return [...new Set([...config.inventory.reservations.statuses, ...RELEASING_STATUSES])];
}

/** Makes and ends reservations; see the module comment. */
export class ReservationSync {
  readonly store: ReservationStore;
  readonly #deps: ReservationSyncDeps;
  #queue: Queue<InventoryJobData> | undefined;

  constructor(deps: ReservationSyncDeps) {
    this.#deps = deps;
    this.store = openReservationStore(deps.redis, deps.config);
  }

  /**
   * Queues the stock targets of the Codes whose reservations changed: each site of `inventory.sites`
   * (a sale on one site changes every site's figure), else the default target. Opened on first use:
   * opening a queue writes its metadata, and a dry run must write nothing.
   */
  async #enqueue(codes: readonly string[], priority: number): Promise<void> {
    if (codes.length === 0) return;
    this.#queue ??= openInventoryQueue(this.#deps.redis, this.#deps.config);
    const sites = siteIdsOf(this.#deps.config.inventory);
    await enqueueSkus(this.#queue, codes.flatMap((code) => stockTargets(code, sites)), { priority });
  }

  /**
   * Records a sales pull that read every site. The first on this prefix queues every kit in `kits` (their
   * figures waited for it: kit-stock.ts, `waitsForFirstSalesPull`); should the queueing fail, the mark is
   * taken back so that the next pull queues them.
   */
  async pulled(kits: () => Promise<readonly string[]>): Promise<void> {
    const key = firstSalesPullKey(this.#deps.config.redis.prefix);
    if ((await this.#deps.redis.set(key, String(this.#deps.now()), 'NX')) !== 'OK') return;
    try {
      const codes = await kits();
      await this.#enqueue(codes, PRIORITY.decrease);
      this.#deps.logger.info({ kits: codes.length }, `first complete sales pull of this deployment: ${codes.length} kit(s), whose figures waited for it, queued`);
    } catch (error) {
      await this.#deps.redis.del(key);
      throw error;
    }
  }

  /** Reserves the lines of sales in a reserving status, releases those cancelled or rejected, and queues their Codes. */
  async observe(sales: ReadonlyArray<{ siteId: number; sale: Sale; since: number }>): Promise<ObserveReport> {
    const report = await this.record(sales);
    await this.requeue();
    return report;
  }

  /**
   * What `observe` does without queueing: the Codes whose reservations changed wait in Redis for
   * `requeue`, once the pull has read every site.
   */
  async record(sales: ReadonlyArray<{ siteId: number; sale: Sale; since: number }>): Promise<ObserveReport> {
    const { statuses } = this.#deps.config.inventory.reservations;
    const toReserve: SaleLines[] = [];
    const toRelease: ReservedSaleKey[] = [];
    for (const { siteId, sale, since } of sales) {
      const status = sale.Status;
      if (typeof status !== 'number') continue;
      if (status < 0) toRelease.push({ siteId, saleId: sale.Id });
      else if (statuses.includes(status)) {
        const lines = await this.#reservedLines(soldLines(sale), { siteId, saleId: sale.Id });
        if (lines.size > 0) toReserve.push({ siteId, saleId: sale.Id, since, lines });
      }
    }
    const reserved = await this.store.reserve(toReserve);
    if (reserved.length > 0) await this.#deps.redis.sadd(this.#requeueKey('decrease'), ...reserved);
    const released = await this.#releaseOnly(toRelease, 'cancelled or rejected on the store');
    if (released.length > 0) await this.#deps.redis.sadd(this.#requeueKey('increase'), ...released);
    return { reserved: reserved.length, released: released.length === 0 ? 0 : toRelease.length };
  }

  /**
   * Queues every site's target of the Codes `record` left waiting, once each: a Code reserved anywhere
   * first (its figures fall), one only released after.
   */
  async requeue(): Promise<void> {
    const decrease = await this.#deps.redis.smembers(this.#requeueKey('decrease'));
    const falling = new Set(decrease);
    const increase = (await this.#deps.redis.smembers(this.#requeueKey('increase'))).filter((code) => !falling.has(code));
    await this.#enqueue(decrease, PRIORITY.decrease);
    await this.#enqueue(increase, PRIORITY.increase);
    // Only what was read: a Code another pull recorded meanwhile stays for its own requeue.
    if (decrease.length > 0) await this.#deps.redis.srem(this.#requeueKey('decrease'), ...decrease);
    if (increase.length > 0) await this.#deps.redis.srem(this.#requeueKey('increase'), ...increase);
  }

  #requeueKey(priority: 'decrease' | 'increase'): string {
    return stateKey(this.#deps.config.redis.prefix, 'inv', 'resrequeue', priority);
  }

  /** Books sales the ERP has processed at `bookedAt` (default: now); returns the SKUs whose figures follow. */
  async book(bookings: ReadonlyArray<ReservedSaleKey & { bookedAt?: number }>): Promise<string[]> {
    const seenAt = this.#deps.now();
    const skus = await this.store.book(bookings.map((b) => ({ ...b, bookedAt: b.bookedAt ?? seenAt })), seenAt);
    // A booking changes nothing at once (the old figure still counts the sale); the ERP's new figure does.
    await this.#enqueue(skus, PRIORITY.increase);
    if (skus.length > 0) this.#deps.logger.info({ sales: bookings.length, skus: skus.length }, 'reservations booked by the ERP');
    return skus;
  }

  /** One scheduled round: rebuild if missing, book what the sink reports, expire, refresh the gauges. */
  async check(sink: SalesSink | undefined, pendingSales: PendingSales): Promise<CheckReport> {
    const report: CheckReport = { rebuilt: 0, booked: 0, expired: 0, cancelled: 0, open: 0 };
    if (!(await this.store.isReady())) report.rebuilt = await this.rebuild(sink, pendingSales);
    const open = await this.store.open();
    if (sink?.processed && open.length > 0) {
      const processed = await sink.processed(open);
      await this.book(processed.map((p) => ({ siteId: p.siteId, saleId: p.saleId, bookedAt: p.processedAt })));
      report.booked = processed.length;
    }
    const minutes = this.#deps.config.inventory.reservations.releaseAfterMinutes;
    if (minutes !== null) {
      const limit = this.#deps.now() - minutes * 60_000;
      const expired = (await this.store.open()).filter((sale) => sale.since <= limit);
      await this.#release(expired, `not booked by the ERP within ${minutes} minutes`);
      report.expired = expired.length;
    }
    report.cancelled = await this.#checkOutsideWindow();
    report.open = await this.refreshGauges();
    return report;
  }

  /**
   * The pull no longer reads sales created before its window, so a cancellation of one would go unseen:
   * the oldest open ones are read again from the store, a bounded number per round.
   */
  async #checkOutsideWindow(): Promise<number> {
    const windowStart = this.#deps.now() - this.#deps.config.sales.pull.lookbackHours * 3_600_000;
    const old = (await this.store.open(OUT_OF_WINDOW_READS)).filter((sale) => sale.since < windowStart);
    const cancelled = (await this.#readSales(old)).filter(({ sale }) => typeof sale.Status === 'number' && sale.Status < 0);
    return this.#release(cancelled.map(({ siteId, sale }) => ({ siteId, saleId: sale.Id })), 'cancelled or rejected on the store');
  }

  /**
   * Rebuilds a missing reservation set (after a Redis loss, or when reservations are first enabled):
   * the sink's sales not yet processed, and the sales the sales flow has not finished, read again
   * from the store. Sales seen before keep their state. Returns the sales reserved.
   */
  async rebuild(sink: SalesSink | undefined, pendingSales: PendingSales): Promise<number> {
    const now = this.#deps.now();
    const sales: SaleLines[] = [];
    for (const sale of (await sink?.unprocessed?.()) ?? []) {
      const sold = [...sale.lines].map(([code, quantity]) => ({ code, quantity }));
      const lines = await this.#reservedLines(sold, sale);
      sales.push({ siteId: sale.siteId, saleId: sale.saleId, since: sale.receivedAt || now, lines });
    }
    const known = new Set(sales.map((sale) => `${sale.siteId}:${sale.saleId}`));
    const pending = (await pendingSales()).filter((key) => !known.has(`${key.siteId}:${key.saleId}`));
    const read = await this.#readSales(pending);
    const report = await this.observe(read);
    const skus = await this.store.reserve(sales);
    await this.#enqueue(skus, PRIORITY.decrease);
    await this.store.markReady(now);
    const rebuilt = sales.length + report.reserved;
    this.#deps.logger.info({ fromSink: sales.length, fromStore: read.length }, 'reservation set rebuilt');
    return rebuilt;
  }

  /** Sets the reservation gauges; returns the open sales. */
  async refreshGauges(): Promise<number> {
    const stats = await this.store.stats();
    const { metrics } = this.#deps;
    metrics.reservedUnits.set(stats.units);
    metrics.reservationsOpen.set(stats.open);
    metrics.reservationOldestAge.set(stats.oldestSince === null ? 0 : Math.max(0, (this.#deps.now() - stats.oldestSince) / 1000));
    return stats.open;
  }

  /** Closes the queue handle (not the connection). */
  async close(): Promise<void> {
    await this.#queue?.close();
  }

  /** A sale's units per code, a kit line as its components (listing/kits/sale-lines.ts). */
  async #reservedLines(sold: readonly SoldLine[], sale: ReservedSaleKey): Promise<Map<string, number>> {
    const { lines, unresolved } = await reservedLines(sold, this.#deps.kits ?? NO_KITS);
    // Without kits configured, IsCombo lines reserve their own code as they always did: nothing to say.
    if (this.#deps.kits) {
      for (const kit of unresolved) this.#deps.logger.warn({ ...sale, code: kit.code }, `kit sale line reserved as its own code: ${kit.reason}`);
    }
    return lines;
  }

  async #release(keys: readonly ReservedSaleKey[], reason: string): Promise<number> {
    const skus = await this.#releaseOnly(keys, reason);
    await this.#enqueue(skus, PRIORITY.increase);
    return skus.length === 0 ? 0 : keys.length;
  }

  /** Releases, without queueing; returns the SKUs whose reservations changed. */
  async #releaseOnly(keys: readonly ReservedSaleKey[], reason: string): Promise<string[]> {
    if (keys.length === 0) return [];
    const skus = await this.store.release(keys, reason, this.#deps.now());
    if (skus.length > 0) this.#deps.logger.info({ sales: keys.length, skus: skus.length, reason }, 'reservations released');
    return skus;
  }

  async #readSales(keys: readonly ReservedSaleKey[]): Promise<Array<{ siteId: number; sale: Sale; since: number }>> {
    const out: Array<{ siteId: number; sale: Sale; since: number }> = [];
    for (const key of keys) {
      try {
        out.push({ siteId: key.siteId, sale: await this.#deps.store.sales.get(key.saleId), since: this.#deps.now() });
      } catch (error) {
        this.#deps.logger.warn({ ...key, err: (error as Error).message }, 'reservation rebuild: cannot read the sale from the store');
      }
    }
    return out;
  }
}

/** What `markSalesProcessed` did per sale. */
export interface ProcessedOutcome {
  siteId: number;
  saleId: number;
  /** booked: released for figures from the booking on; the others changed nothing. */
  result: 'booked' | 'already booked' | 'released before' | 'not reserved';
}

/**
 * Tells storesync the ERP has booked these sales at `bookedAt` (default now): `storesync sales
 * processed` and `POST /admin/sales/processed`, for sinks that cannot report it themselves.
 */
export async function markSalesProcessed(
  deps: FlowDeps,
  request: { siteId: number; saleIds: readonly number[]; bookedAt?: number },
): Promise<ProcessedOutcome[]> {
  const redis = deps.connect();
  const sync = new ReservationSync({ config: deps.config, redis, logger: deps.logger, metrics: deps.metrics, store: deps.store, now: deps.now ?? Date.now });
  try {
    const keys = request.saleIds.map((saleId) => ({ siteId: request.siteId, saleId }));
    const before = await sync.store.sales(keys);
    await sync.book(keys.map((key) => ({ ...key, ...(request.bookedAt === undefined ? {} : { bookedAt: request.bookedAt }) })));
    return keys.map((key, i) => {
      const state = before[i]?.state;
      const result = state === 'open' ? 'booked' : state === 'booked' ? 'already booked' : state === 'released' ? 'released before' : 'not reserved';
      return { ...key, result };
    });
  } finally {
    await sync.close();
    await redis.quit().catch(() => redis.disconnect());
  }
}
