/**
 * The stock storesync publishes for a SKU: `max(0, ERP stock − reserved − safety stock)`, where
 * `reserved` sums the reservations that still apply to the ERP figure (see `reservations.ts` for when
 * a booked reservation stops applying) and the safety stock is the record's `SafetyStock`, else
 * `inventory.safetyStock`. The worker sends this figure instead of the ERP's, and the reconcile
 * compares the store with it, so neither undoes a reservation.
 *
 * A publish is versioned by a pair: the ERP version (the newer of the Stock and SafetyStock values)
 * and the reservation version. The pair the store last took is kept in the applied hash (`Stock`,
 * `Stock@reservations`); a pair older in either part is stale and never sent.
 */
import type { SourceRecord } from '../../../erp/types.js';
import type { ValidationIssue } from '../../../errors.js';
import type { Settlement, SkuState } from '../state.js';
import type { PendingEntry } from '../types.js';
import { allocate, type Allocation, type Placement } from './allocation.js';
import { parseSkuReservations, type Reservation, type SkuReservations } from './reservations.js';

/** The per-record safety stock field (a source column): never sent to the store. */
export const SAFETY_FIELD = 'SafetyStock';
/** The applied-hash field holding the reservation version of the last publish. */
export const RESERVATION_VERSION_FIELD = 'Stock@reservations';
/** The applied-hash field holding the reservations' `moves` counter of the last publish. */
export const RESERVATION_MOVES_FIELD = 'Stock@moves';
/** Fields an ERP may give that storesync uses itself and never sends to the store. */
export const LOCAL_FIELDS: ReadonlySet<string> = new Set([SAFETY_FIELD]);

/** The ERP fields the published stock is computed from. */
const STOCK_INPUTS: readonly string[] = ['Stock', SAFETY_FIELD];

/** The fields of a record the store takes (without `LOCAL_FIELDS`). */
export function storeFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([field]) => !LOCAL_FIELDS.has(field)));
}

/** Issues of the fields storesync keeps for itself (the store's validation does not see them). */
export function localFieldIssues(record: Pick<SourceRecord, 'fields' | 'ref'>, code: string | undefined): ValidationIssue[] {
  const value = record.fields[SAFETY_FIELD];
  if (value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0)) return [];
  return [{ record: code ?? record.ref, field: SAFETY_FIELD, value, rule: 'a whole number, 0 or more' }];
}

/** What an ERP figure needs for the release rule: its version, whether that is a timestamp, when it was read. */
export type Figure = Pick<PendingEntry, 'version' | 'at' | 'changedAt' | 'observedAt'>;

/**
 * True when a reservation still counts against `figure`: open ones always; booked ones only for a
 * figure older than the booking (by its timestamp version, or else by when it was read).
 */
export function appliesTo(reservation: Reservation, figure: Figure): boolean {
  if (reservation.bookedAt === undefined) return true;
  if (figure.changedAt !== undefined) return figure.version < reservation.bookedAt;
  // Read at the very moment the booking was seen: counted as before it (publishing less is safe).
  return (figure.observedAt ?? figure.at) <= (reservation.seenAt ?? reservation.bookedAt);
}

/** The published figure and how it was reached (`inventory explain` shows it). */
export interface PublishedStock {
  erpStock: number;
  reserved: number;
  safetyStock: number;
  published: number;
  /** Reservations counted. */
  applying: Reservation[];
  /** Booked reservations the figure has passed: they can go. */
  passed: Reservation[];
  /** With several sites (`inventory.sites`): the whole allocation, `published` being this site's figure. */
  allocation?: Allocation;
}

/**
 * Computes the published stock of an ERP figure; with a `placement` (a site of `inventory.sites`), that
 * site's figure of the allocation (`allocation.ts`).
 */
export function publishedStock(erpStock: number, figure: Figure, reservations: SkuReservations, safetyStock: number, placement?: Placement): PublishedStock {
  const applying: Reservation[] = [];
  const passed: Reservation[] = [];
  for (const reservation of reservations.entries) (appliesTo(reservation, figure) ? applying : passed).push(reservation);
  // A fractional quantity holds a whole unit: rounding up never publishes more than is there.
  const reserved = Math.ceil(applying.reduce((sum, r) => sum + r.quantity, 0));
  if (placement) {
    const allocation = allocate(erpStock, applying, safetyStock, placement.sites, placement.mode);
    const published = allocation.sites.find((site) => site.siteId === placement.siteId)?.published ?? 0;
    return { erpStock, reserved, safetyStock, published, applying, passed, allocation };
  }
  return { erpStock, reserved, safetyStock, published: Math.max(0, erpStock - reserved - safetyStock), applying, passed };
}

/** The safety stock of a SKU: its record's value when the ERP gave one, else the configured default. */
export function safetyStockOf(entry: Pick<PendingEntry, 'value'> | undefined, fallback: number): number {
  return typeof entry?.value === 'number' && Number.isInteger(entry.value) && entry.value >= 0 ? entry.value : fallback;
}

/** The newer of two entries (higher version; among equal versions the later merge), as `MERGE` keeps. */
export function newestEntry(a: PendingEntry | undefined, b: PendingEntry | undefined): PendingEntry | undefined {
  if (!a || !b) return a ?? b;
  return b.version > a.version || (b.version === a.version && b.at >= a.at) ? b : a;
}

/** What the worker does about a SKU's stock. */
export interface StockPlan {
  /** The published figure to send, as a pending read of `Stock` (its raw is the pending entry handled). */
  send?: { raw: string; entry: PendingEntry };
  /** Settled once the store has taken `send` (the ERP and reservation versions, the safety stock entry). */
  onApplied: Settlement[];
  /** Settled now (nothing to send, or stale). */
  settled: Settlement[];
  /** Booked reservations that no longer apply to the SKU's figure. */
  passed: Reservation[];
  /** The computation, when there was an ERP figure. */
  computed?: PublishedStock;
}

/**
 * Decides the SKU's stock publish from its state: the newest ERP figure (sent or not), the
 * reservations and the safety stock (and, for a site of `inventory.sites`, the allocation). `force`
 * resends even a figure the store acknowledged.
 */
export function planStock(state: SkuState, force: boolean, defaultSafety: number, placement?: Placement): StockPlan {
  const handled = STOCK_INPUTS.flatMap((field) => {
    const read = state.pending.get(field);
    return read ? [{ field, read }] : [];
  });
  const drop = (): Settlement[] => handled.map(({ field, read }) => ({ mode: 'drop', field, read }));
  const applied = (): Settlement[] => handled.map(({ field, read }) => ({ mode: 'applied', field, read }));
  const pendingStock = state.pending.get('Stock');
  const figure = newestEntry(state.erp.get('Stock'), pendingStock?.entry);
  if (!figure) {
    // A safety stock without any ERP stock has nothing to apply to yet; the ERP hash keeps it.
    return { onApplied: [], settled: applied(), passed: [] };
  }
  if (!isStockValue(figure.value)) {
    // A value the store would refuse goes out as it is, so that the job fails with its reason and it
    // leaves the pending state; kept only in the ERP hash, it is never sent again.
    const send = pendingStock && figure === pendingStock.entry ? pendingStock : undefined;
    return { ...(send ? { send } : {}), onApplied: [], settled: handled.filter(({ field }) => field !== 'Stock' || !send).map(({ field, read }) => ({ mode: 'drop', field, read })), passed: [] };
  }
  const safetyEntry = newestEntry(state.erp.get(SAFETY_FIELD), state.pending.get(SAFETY_FIELD)?.entry);
  const reservations = parseSkuReservations(state.reservations);
  const erpVersion = Math.max(figure.version, safetyEntry?.version ?? Number.NEGATIVE_INFINITY);
  const resVersion = reservations.version;
  const appliedErp = state.applied.get('Stock');
  // The store moves a listing itself for the sales placed or cancelled on it: with sites, its own site's.
  const moves = placement ? (reservations.siteMoves?.get(placement.siteId) ?? 0) : reservations.moves;
  const appliedRes = state.applied.get(RESERVATION_VERSION_FIELD) ?? 0;
  // A forced value older than what the store took forces nothing (never stale); nor does a job forced
  // for other fields.
  const fresh = handled.filter(({ read }) => appliedErp === undefined || read.entry.version >= appliedErp);
  const forced = fresh.length > 0 && (force || fresh.some(({ read }) => read.entry.force === true));
  const computed = publishedStock(figure.value, figure, reservations, safetyStockOf(safetyEntry, defaultSafety), placement);
  const { passed } = computed;
  if (appliedErp !== undefined && (erpVersion < appliedErp || resVersion < appliedRes)) {
    return { onApplied: [], settled: drop(), passed, computed };
  }
  // A snapshot diff's value at the version the store took may still be new: change detection decides.
  const resend = fresh.some(({ read }) => read.entry.resend === true);
  if (appliedErp !== undefined && erpVersion === appliedErp && resVersion === appliedRes && !forced && !resend) {
    return { onApplied: [], settled: drop(), passed, computed };
  }
  const entry: PendingEntry = {
    value: computed.published,
    version: erpVersion,
    at: figure.at,
    source: figure.source,
    // The sync-lag metric measures ERP changes, not recomputations after a reservation change.
    ...(pendingStock?.entry.changedAt === undefined ? {} : { changedAt: pendingStock.entry.changedAt }),
  };
  const stock = { raw: pendingStock?.raw ?? '', entry };
  const versions: Settlement[] = [
    ...handled.filter(({ field }) => field !== 'Stock').map(({ field, read }): Settlement => ({ mode: 'applied', field, read })),
    { mode: 'applied', field: RESERVATION_VERSION_FIELD, read: { raw: '', entry: { ...entry, version: resVersion } } },
    { mode: 'applied', field: RESERVATION_MOVES_FIELD, read: { raw: '', entry: { ...entry, version: moves } } },
  ];
  // A write carries new information: a figure equal to what the store acknowledged is not sent, unless
  // the store moved this listing itself since. It lowers its own stock when a sale is placed and raises
  // it when one is cancelled; storesync learns of either only as a reservation added or released. After
  // one on this listing (with sites: a sale of this target's site), what the store last acknowledged is
  // no longer what it shows: an ERP change and a new sale that cancel out (10 sent, a sale of 1 takes the
  // store to 9, the ERP goes to 11: 11 − 1 = 10) must still be sent. A sale on another site moves
  // another copy: this site's equal figure is not sent again.
  const storeMoved = moves !== (state.applied.get(RESERVATION_MOVES_FIELD) ?? 0);
  if (!forced && !storeMoved && state.acked.get('Stock') === computed.published) {
    return { onApplied: [], settled: [{ mode: 'applied', field: 'Stock', read: stock }, ...versions], passed, computed };
  }
  return { send: stock, onApplied: versions, settled: [], passed, computed };
}

function isStockValue(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** True for the fields `planStock` handles (the worker leaves them out of its own plan). */
export function isStockInput(field: string): boolean {
  return STOCK_INPUTS.includes(field);
}
