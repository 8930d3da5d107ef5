/**
 * What a listing may show: the ERP stock less the safety stock and the sales the ERP has not booked yet
 * (`published-stock.ts`), those sales kept per Code (`reservations.ts`) and made and ended by the sales
 * pull (`reservation-sync.ts`), and with `inventory.sites` one stock shared among the sites
 * (`allocation.ts`).
 */
export { allocate, type Allocation, describeAllocation, placementOf, type SiteFigure } from './allocation.js';
export * from './kits/index.js';
export {
  appliesTo,
  isStockInput,
  LOCAL_FIELDS,
  localFieldIssues,
  newestEntry,
  planStock,
  publishedStock,
  RESERVATION_MOVES_FIELD,
  RESERVATION_VERSION_FIELD,
  SAFETY_FIELD,
  safetyStockOf,
  storeFields,
} from './published-stock.js';
export { type CheckReport, markSalesProcessed, type ProcessedOutcome, reservationPullStatuses, ReservationSync } from './reservation-sync.js';
export { openReservationStore, parseSkuReservations, type Reservation, type ReservationStore, type SkuReservations } from './reservations.js';
