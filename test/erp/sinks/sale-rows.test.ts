import { describe, expect, it } from 'vitest';

import { SALE_COLUMNS, SALE_ITEM_COLUMNS } from '../../../src/erp/sinks/interface-tables.js';
import { saleItemRows, saleRow, storeInstant } from '../../../src/erp/sinks/sale-rows.js';
import { saleSchema } from '../../../src/store/schemas/index.js';
import { sampleSale } from './sale-fixture.js';

const TZ = 'America/Argentina/Buenos_Aires';
const receivedAt = new Date('2024-03-15T12:00:00Z');

describe('sale rows', () => {
  it('fills every column storesync writes, and only those', () => {
    const row = saleRow(sampleSale(1), 1, { timeZone: TZ, receivedAt });
    const written = SALE_COLUMNS.filter((c) => !c.erpOwned).map((c) => c.name);
    expect(Object.keys(row).sort()).toEqual([...written].sort());
    const [line] = saleItemRows(sampleSale(1), 1);
    expect(Object.keys(line!).sort()).toEqual(SALE_ITEM_COLUMNS.map((c) => c.name).sort());
  });

  it('reads zone-less store dates in the store zone and keeps them as UTC instants', () => {
    const row = saleRow(sampleSale(1, { CreationDate: '/Date(1710469800000)/', ModificationDate: '2024-03-15T08:00:00' }), 1, { timeZone: TZ, receivedAt });
    expect(row.creation_date).toEqual(new Date(1710469800000));
    expect(row.modification_date).toEqual(new Date('2024-03-15T11:00:00Z'));
  });

  it('leaves an unreadable date empty instead of refusing the sale', () => {
    expect(storeInstant('yesterday-ish', TZ)).toBeNull();
    expect(saleRow(sampleSale(1, { CreationDate: 'yesterday-ish' }), 1, { timeZone: TZ, receivedAt }).creation_date).toBeNull();
  });

  it('falls back to the billing address and the other name fields when the preferred ones are empty', () => {
    const sale = saleSchema.parse({
      Id: 5,
      UserData: { FirstName: '  ', Mobile: '11 5555-0000' },
      BillingAddress: { Email: 'billing@example.com', IdNumber: '20-1-3', AddressLine1: 'Av. Siempreviva 742', City: 'Córdoba' },
    });
    expect(saleRow(sale, 2, { timeZone: TZ, receivedAt })).toMatchObject({
      site_id: 2,
      customer_first_name: null,
      customer_email: 'billing@example.com',
      customer_document: '20-1-3',
      customer_phone: '11 5555-0000',
      billing_street: 'Av. Siempreviva 742',
      billing_city: 'Córdoba',
      shipping_street: null,
      total: null,
    });
    expect(saleItemRows(sale, 2)).toEqual([]);
  });

  it('numbers lines from 1 in store order and takes the sale currency when a line has none', () => {
    const rows = saleItemRows(sampleSale(9), 1);
    expect(rows.map((r) => [r.line, r.code, r.currency_code, r.quantity, r.unit_price])).toEqual([
      [1, 'MATE-01', 'ARS', 2, 4500],
      [2, 'BOMB-02', 'ARS', 1, 4730.5],
    ]);
  });
});
