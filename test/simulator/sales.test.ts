import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatStoreDate } from '../../src/simulator/clock.js';
import { type Sale, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

const TZ = 'America/Argentina/Buenos_Aires';
/** 2024-03-10 12:00 in Buenos Aires (UTC-3). */
const NOON_MARCH_10 = Date.UTC(2024, 2, 10, 15);
const HOUR = 3_600_000;

const ids = (sales: readonly Sale[]): number[] => sales.map((sale) => sale.Id);

describe('simulator sales', () => {
  let sim: Simulator;
  let s: Session;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: [{ Code: 'SKU-1', Price: 10 }], sales: 0, users: 3 });
    const at = (ms: number): string => formatStoreDate(ms, TZ);
    const a = { FirstName: 'María José', LastName: 'Núñez', EMail: 'mj.nunez@example.com', Phone: '+54 11 4444-1234', PostalCode: '1414', IdNumber: '30111222' };
    const b = { FirstName: 'Julián', LastName: 'Pérez', EMail: 'julian@example.com', Phone: '+54 351 555-9876', PostalCode: '5000', IdNumber: '28999111' };
    const c = { FirstName: 'Inés', LastName: 'Álvarez', EMail: 'ines@example.com', Phone: '+54 261 777-0001', PostalCode: '5500', IdNumber: '40123123' };
    sim.addSale({ Id: 10, Status: 0, CreationDate: at(NOON_MARCH_10 - 24 * HOUR), SiteId: 1, UserData: a, PayMethodId: 1, SubStatus: 0, ExternalReference: 'R-10' });
    sim.addSale({ Id: 11, Status: 1, CreationDate: at(NOON_MARCH_10), SiteId: 1, UserData: b, PayMethodId: 2, SubStatus: 1, ExternalReference: 'R-11' });
    sim.addSale({ Id: 12, Status: 1, CreationDate: at(NOON_MARCH_10 + 11 * HOUR), SiteId: 2, UserData: c, PayMethodId: 1, SubStatus: 0, ExternalReference: 'R-11' });
    sim.addSale({ Id: 13, Status: -2, CreationDate: at(NOON_MARCH_10 + 13 * HOUR), SiteId: 1, UserData: a, PayMethodId: 4, SubStatus: 2, ExternalReference: 'R-13' });
    sim.addSale({ Id: 14, Status: 3, CreationDate: at(NOON_MARCH_10 + 48 * HOUR), SiteId: 1, UserData: b, PayMethodId: 1, SubStatus: 0, ExternalReference: 'R-14', Items: [{ Code: 'SKU-1', Quantity: 2 }], ShippingCost: 5, Discount: 0 });
    s = await session(sim.url);
  });
  afterAll(() => sim.close());

  const list = async (query: Record<string, string | number> = {}): Promise<number[]> => {
    const res = await s.call<Sale[]>('GET', '/Api/Sale/', { query });
    expect(res.status).toBe(200);
    return ids(res.body);
  };

  it('lists every sale in ascending Id order', async () => {
    expect(await list()).toEqual([10, 11, 12, 13, 14]);
  });

  it('pages with limit and offset', async () => {
    expect(await list({ limit: 2 })).toEqual([10, 11]);
    expect(await list({ limit: 2, offset: 2 })).toEqual([12, 13]);
    expect(await list({ limit: 2, offset: 4 })).toEqual([14]);
    expect(await list({ limit: 2, offset: 6 })).toEqual([]);
  });

  it('repeats the first page when the ignoreOffset fault is on', async () => {
    sim.faults.set({ ignoreOffset: true });
    try {
      expect(await list({ limit: 2, offset: 2 })).toEqual([10, 11]);
    } finally {
      sim.faults.set({ ignoreOffset: false });
    }
  });

  it('filters by a comma list of statuses', async () => {
    expect(await list({ status: '1,-2' })).toEqual([11, 12, 13]);
    expect(await list({ status: '0' })).toEqual([10]);
  });

  it('filters by whole store-time-zone days with from and to, both included', async () => {
    expect(await list({ from: '2024-03-10', to: '2024-03-10' })).toEqual([11, 12]);
    expect(await list({ from: '2024-03-10' })).toEqual([11, 12, 13, 14]);
    expect(await list({ to: '2024-03-09' })).toEqual([10]);
    // Sale 12 is 23:00 on March 10 in Buenos Aires but 02:00 on March 11 in UTC: days are the store's.
    expect(await list({ from: '2024-03-11', to: '2024-03-11' })).toEqual([13]);
  });

  it('finds a sale by external_reference and siteId', async () => {
    expect(await list({ external_reference: 'R-11', siteId: 1 })).toEqual([11]);
    expect(await list({ external_reference: 'R-11', siteId: 2 })).toEqual([12]);
    expect(await list({ external_reference: 'R-99', siteId: 1 })).toEqual([]);
  });

  it('filters by subStatus, payMethodId and siteId', async () => {
    expect(await list({ subStatus: 1 })).toEqual([11]);
    expect(await list({ payMethodId: 1 })).toEqual([10, 12, 14]);
    expect(await list({ siteId: 2 })).toEqual([12]);
  });

  it('filters by customer e-mail, document number, phone digits, postal code and partial name', async () => {
    expect(await list({ email: 'JULIAN@example.com' })).toEqual([11, 14]);
    expect(await list({ identification_number: '40123123' })).toEqual([12]);
    expect(await list({ last_digits_phone: '1234' })).toEqual([10, 13]);
    expect(await list({ postal_code: 5000 })).toEqual([11, 14]);
    expect(await list({ full_name: 'nunez' })).toEqual([10, 13]);
    expect(await list({ full_name: 'José Núñ' })).toEqual([10, 13]);
  });

  it.each([
    ['status', 'one'],
    ['from', '10/03/2024'],
    ['to', '2024-02-30'],
    ['limit', '-1'],
    ['offset', 'x'],
    ['postal_code', 'B1414'],
    ['last_digits_phone', '12a'],
  ])('answers 400 to a malformed %s', async (name, value) => {
    expect((await s.call('GET', '/Api/Sale/', { query: { [name]: value } })).status).toBe(400);
  });

  it('writes CreationDate as MM/DD/YYYY HH:MM:SS in the store time zone', async () => {
    const res = await s.call<Sale>('GET', '/Api/Sale/11');
    expect(res.body.CreationDate).toBe('03/10/2024 12:00:00');
  });

  it('returns one sale by id with its nested objects, and 404 for an unknown id', async () => {
    const res = await s.call<Sale>('GET', '/api/sale/14', { query: { from: '2024-01-01', to: '2024-12-31' } });
    expect(res.status).toBe(200);
    expect(res.body.Items).toHaveLength(1);
    expect(res.body.Items[0]).toMatchObject({ Code: 'SKU-1', Quantity: 2, Price: 10, SaleId: 14 });
    expect(res.body.Total).toBe(25);
    expect(res.body.PayMethod.Id).toBeTypeOf('number');
    expect(res.body.Currency.Code).toBe('ARS');
    expect(res.body.BillingAddress.Type).toBe(1);
    expect(res.body.ShippingAddress.Type).toBe(0);
    expect((await s.call('GET', '/Api/Sale/999')).status).toBe(404);
  });

  it('updates the status, tracking code and observations, logs the update, and keeps other fields', async () => {
    const res = await s.call<Sale>('PUT', '/Api/Sale/12', {
      body: { Id: 12, Status: 2, TrackingCode: 'TN123AR', Obeservations: 'Despachado', Total: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ Id: 12, Status: 2, StatusText: 'En proceso', TrackingCode: 'TN123AR', Obeservations: 'Despachado' });
    expect(res.body.Total).not.toBe(1);
    expect(sim.saleUpdates.at(-1)).toMatchObject({ saleId: 12, fields: { Status: 2, TrackingCode: 'TN123AR', Obeservations: 'Despachado' } });
  });

  it('refuses a sale update with a mismatched Id, a misspelt field or a wrong type with 400, and an unknown sale with 404', async () => {
    expect((await s.call('PUT', '/Api/Sale/12', { body: { Id: 13, Status: 1 } })).status).toBe(400);
    expect((await s.call('PUT', '/Api/Sale/12', { body: { Observations: 'x' } })).status).toBe(400);
    expect((await s.call('PUT', '/Api/Sale/12', { body: { Status: '1' } })).status).toBe(400);
    expect((await s.call('PUT', '/Api/Sale/999', { body: { Status: 1 } })).status).toBe(404);
  });

  it('refuses a second sale with the same ExternalReference on the same site', () => {
    expect(() => sim.addSale({ ExternalReference: 'R-10', SiteId: 1 })).toThrow(/already used/);
  });
});
