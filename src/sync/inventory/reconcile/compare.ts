/**
 * How the reconcile decides that an ERP value and a store value are the same. The store answers
 * tolerantly typed JSON (decimals as numbers or numeric strings, objects with extra keys), so values
 * are compared by meaning: numbers within half a cent, text trimmed, and objects only on the keys the
 * ERP provides.
 */
import { numberFromText } from '../../../store/schemas/fields.js';

/** Money has two decimals: anything closer than half a cent is the same amount. */
const NUMBER_TOLERANCE = 0.005;

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  // Inside fields of no fixed shape (ExtendedWarranty) a store may write decimals as text, with a comma too.
  if (typeof value === 'string') return numberFromText(value);
  return undefined;
}

/** True when the store's value says the same as the ERP's. */
export function sameValue(erp: unknown, store: unknown): boolean {
  if (erp === null || erp === undefined) return store === null || store === undefined || store === '';
  if (typeof erp === 'number') {
    const other = asNumber(store);
    return other !== undefined && Math.abs(erp - other) < NUMBER_TOLERANCE;
  }
  if (typeof erp === 'string') {
    return (typeof store === 'string' || typeof store === 'number') && String(store).trim() === erp.trim();
  }
  if (Array.isArray(erp)) {
    return Array.isArray(store) && store.length === erp.length && erp.every((item, i) => sameValue(item, store[i]));
  }
  if (typeof erp === 'object') {
    if (store === null || typeof store !== 'object' || Array.isArray(store)) return false;
    return Object.entries(erp).every(([key, value]) => sameValue(value, (store as Record<string, unknown>)[key]));
  }
  return erp === store;
}
