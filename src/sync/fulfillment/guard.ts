/**
 * The transition guard of shipment updates, pure so it is tested on its own: a status the store does
 * not know is refused, a sale in a final status keeps it unless forced, and fields already holding the
 * wanted value are not sent again.
 */
import type { ValidationIssue } from '../../errors.js';
import type { Sale } from '../../store/schemas/index.js';
import { FULFILLMENT_UPDATE_FIELDS, type FulfillmentUpdate } from './types.js';

/** What to do with an update. */
export type FulfillmentPlan =
  | { action: 'send'; changed: string[] }
  | { action: 'unchanged' }
  | { action: 'refuse'; issue: ValidationIssue };

/** Settings of the guard (`fulfillment.statuses`, `fulfillment.finalStatuses`). */
export interface GuardSettings {
  statuses: readonly number[];
  finalStatuses: readonly number[];
}

/** The issue of a status the store does not have, or undefined when the update's status may be set. */
export function unknownStatusIssue(saleId: number, update: FulfillmentUpdate, settings: GuardSettings): ValidationIssue | undefined {
  if (update.Status === undefined || settings.statuses.includes(update.Status)) return undefined;
  return {
    record: `sale ${saleId}`,
    field: 'Status',
    value: update.Status,
    rule: `a sale status of this store (allowed: ${settings.statuses.join(', ')}; see fulfillment.statuses)`,
  };
}

/** The store's value of a field, with absent and null texts read as empty. */
function current(sale: Sale, field: (typeof FULFILLMENT_UPDATE_FIELDS)[number]): unknown {
  const value = sale[field];
  return field === 'Status' ? value : (value ?? '');
}

/** Compares the update with the sale as the store holds it now. */
export function planUpdate(sale: Sale, update: FulfillmentUpdate, settings: GuardSettings, force: boolean): FulfillmentPlan {
  const unknown = unknownStatusIssue(sale.Id, update, settings);
  if (unknown) return { action: 'refuse', issue: unknown };
  const changed = FULFILLMENT_UPDATE_FIELDS.filter((field) => update[field] !== undefined && update[field] !== current(sale, field));
  if (changed.length === 0) return { action: 'unchanged' };
  const status = sale.Status;
  if (changed.includes('Status') && typeof status === 'number' && settings.finalStatuses.includes(status) && !force) {
    const text = sale.StatusText ? ` (${sale.StatusText})` : '';
    return {
      action: 'refuse',
      issue: { record: `sale ${sale.Id}`, field: 'Status', value: update.Status, rule: `no move out of the final status ${status}${text} without force` },
    };
  }
  return { action: 'send', changed };
}
