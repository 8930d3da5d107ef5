/**
 * The sale update as the spec recommends it: "all fields optional, the complete structure of the sale is
 * recommended". A store may replace rather than merge, emptying what a PUT leaves out, so a change is
 * sent inside the complete update structure with the sale's current values for everything it does not
 * change, and a Status always travels with its StatusText.
 */
import { ValidationError } from '../errors.js';
import type { Sale, SaleUpdate } from './schemas/index.js';

/** The update structure's fields besides `Id`, in the order of the spec. */
export const SALE_UPDATE_FIELDS = ['Status', 'StatusText', 'OperationStatus', 'TrackingCode', 'Obeservations', 'Message'] as const;
type UpdateField = (typeof SALE_UPDATE_FIELDS)[number];

const INTEGER_FIELDS: ReadonlySet<UpdateField> = new Set(['Status', 'OperationStatus']);

/**
 * The sale's current value of an update field in the type the update needs, or undefined when the store
 * has none (null, absent) or one that cannot be written back as it is: nothing is then sent for it.
 */
function currentValue(sale: Sale, field: UpdateField): string | number | undefined {
  const value: unknown = (sale as Record<string, unknown>)[field];
  if (INTEGER_FIELDS.has(field)) {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' ? value : undefined;
}

/**
 * The complete update structure for `change` applied to `sale`: every update field the sale holds, with
 * the change's values on top. A changed Status without a text drops the old text, so that the text of
 * the new status is filled in from `store.statusTexts` (see `withStatusText`).
 */
export function completeSaleUpdate(sale: Sale, change: SaleUpdate): SaleUpdate {
  const out: Record<string, string | number> = { Id: sale.Id };
  for (const field of SALE_UPDATE_FIELDS) {
    const value = currentValue(sale, field);
    if (value !== undefined) out[field] = value;
  }
  if (change.Status !== undefined && change.Status !== out.Status && change.StatusText === undefined) delete out.StatusText;
  for (const [field, value] of Object.entries(change)) if (value !== undefined) out[field] = value;
  return out as SaleUpdate;
}

/**
 * `payload` with the StatusText of its Status filled in from `statusTexts` when it carries a Status
 * without a text; a ValidationError (nothing sent) when the status has no configured text.
 */
export function withStatusText(saleId: number, payload: SaleUpdate, statusTexts: Readonly<Record<string, string>>): SaleUpdate {
  if (payload.Status === undefined || payload.StatusText !== undefined) return payload;
  const text = statusTexts[String(payload.Status)];
  if (text === undefined) {
    throw new ValidationError(
      [{ record: `sale ${saleId}`, field: 'StatusText', value: undefined, rule: `the text of status ${payload.Status}: send StatusText or add the status to store.statusTexts` }],
      'sale update',
    );
  }
  return { ...payload, StatusText: text };
}
