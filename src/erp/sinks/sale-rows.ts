/**
 * Maps a store sale to the rows of the interface tables. Pure: no database, no clock (the caller gives
 * `receivedAt`), so the mapping is unit-tested on its own. Column names are those of interface-tables.ts.
 */
import { parseStoreDate } from '../../store/dates.js';
import type { Address, Sale, SaleItem } from '../../store/schemas/index.js';

/** A row keyed by column name; timestamps are Dates (UTC instants), the sink renders them per dialect. */
export type Row = Record<string, string | number | boolean | Date | null>;

/** The first non-empty string, trimmed, or null. */
function firstText(...values: ReadonlyArray<string | null | undefined>): string | null {
  for (const value of values) {
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return null;
}

function numberOrNull(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * A store date (any of its shapes, or epoch ms) as an instant; an unreadable date becomes null rather
 * than blocking the export (the raw value stays in sale_json).
 */
export function storeInstant(value: unknown, timeZone: string): Date | null {
  if (typeof value === 'number') return Number.isFinite(value) ? new Date(value) : null;
  try {
    return parseStoreDate(value, timeZone);
  } catch {
    return null;
  }
}

function addressColumns(prefix: 'billing' | 'shipping', address: Address | null | undefined): Row {
  const a = address ?? {};
  return {
    [`${prefix}_name`]: firstText(a.Name),
    [`${prefix}_street`]: firstText(a.Street, a.AddressLine1),
    [`${prefix}_number`]: firstText(a.StreetNumber),
    [`${prefix}_line2`]: firstText(a.AddressLine2),
    [`${prefix}_city`]: firstText(a.CityName, a.City, a.TownName, a.Town),
    [`${prefix}_state`]: firstText(a.StateName, a.State),
    [`${prefix}_postal_code`]: firstText(a.PostalCode),
    [`${prefix}_country`]: firstText(a.CountryName, a.Country, a.CountryCode),
  };
}

/** The `storesync_sales` row of a sale. `siteId` is the site the sale was pulled for (the key). */
export function saleRow(sale: Sale, siteId: number, options: { timeZone: string; receivedAt: Date }): Row {
  const user = sale.UserData ?? {};
  const billing = sale.BillingAddress ?? {};
  return {
    site_id: siteId,
    sale_id: sale.Id,
    internal_code: firstText(sale.InternalCode),
    status: numberOrNull(sale.Status),
    status_text: firstText(sale.StatusText),
    total: numberOrNull(sale.Total),
    shipping_cost: numberOrNull(sale.ShippingCost),
    discount: numberOrNull(sale.Discount),
    taxes: numberOrNull(sale.Taxes),
    other_cost: numberOrNull(sale.OtherCost),
    currency_code: firstText(sale.Currency?.Code),
    customer_first_name: firstText(user.FirstName),
    customer_last_name: firstText(user.LastName),
    customer_email: firstText(user.EMail, billing.Email),
    customer_document: firstText(user.IdNumber, billing.IdNumber),
    customer_phone: firstText(user.Phone, user.Mobile, billing.Phone),
    ...addressColumns('billing', sale.BillingAddress),
    ...addressColumns('shipping', sale.ShippingAddress),
    creation_date: storeInstant(sale.CreationDate, options.timeZone),
    modification_date: storeInstant(sale.ModificationDate, options.timeZone),
    external_reference: firstText(sale.ExternalReference),
    pay_method_id: numberOrNull(sale.PayMethodId ?? sale.PayMethod?.Id),
    pay_method: firstText(sale.PayMethod?.Name, sale.PayMethod?.Description),
    installments: numberOrNull(sale.Payments),
    shipping_method: firstText(sale.ShippingMethod?.Name, sale.ShippingMethod?.Code),
    sale_json: JSON.stringify(sale),
    received_at: options.receivedAt,
  };
}

/** The `storesync_sale_items` rows of a sale, numbered from 1 in the order the store lists them. */
export function saleItemRows(sale: Sale, siteId: number): Row[] {
  return (sale.Items ?? []).map((item: SaleItem, index) => ({
    site_id: siteId,
    sale_id: sale.Id,
    line: index + 1,
    item_id: numberOrNull(item.Id),
    product_id: numberOrNull(item.ItemId),
    code: firstText(item.Code),
    name: firstText(item.Name),
    quantity: numberOrNull(item.Quantity),
    unit_price: numberOrNull(item.Price),
    currency_code: firstText(item.Currency?.Code, sale.Currency?.Code),
    is_item: item.IsItem ?? null,
    sale_item_type: numberOrNull(item.SaleItemType),
    is_combo: item.IsCombo ?? null,
  }));
}
