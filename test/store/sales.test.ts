import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { formatQueryDate, parseStoreDate } from '../../src/store/dates.js';
import { StoreNotFoundError } from '../../src/store/errors.js';
import type { RecordReject } from '../../src/store/records.js';
import type { PagingStop } from '../../src/store/sales.js';
import { READ_RULES } from '../../src/store/schemas/fields.js';
import type { Sale } from '../../src/store/schemas/index.js';
import { type StoreFixture, storeFixture } from './setup.js';

const TZ = 'America/Argentina/Buenos_Aires';
let fixture: StoreFixture;
const logLines: string[] = [];
const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void logLines.push(line) } });

beforeAll(async () => {
  fixture = await storeFixture({ sales: 250, seed: 7 }, { logger });
});

afterAll(async () => {
  await fixture.close();
});

beforeEach(async () => {
  fixture.sim.reset();
  await fixture.client.login();
  fixture.sim.resetCounters();
});

function stored(id: number): { sale: Sale; createdAtMs: number } {
  const found = fixture.sim.state.salesById.get(id);
  if (!found) throw new Error(`sale ${id} not in the simulator`);
  return found as unknown as { sale: Sale; createdAtMs: number };
}

describe('sales.list', () => {
  it('filters by statuses and a date range given as Dates or YYYY-MM-DD', async () => {
    const target = stored(120);
    const day = formatQueryDate(new Date(target.createdAtMs), TZ);
    const found = await fixture.client.sales.list({ status: [target.sale.Status!, 99], from: new Date(target.createdAtMs), to: day });
    expect(found.map((s) => s.Id)).toContain(120);
    for (const sale of found) {
      expect([target.sale.Status, 99]).toContain(sale.Status);
      expect(formatQueryDate(parseStoreDate(sale.CreationDate, TZ)!, TZ)).toBe(day);
    }
  });

  it('finds a sale by external reference and site', async () => {
    const { sale } = stored(42);
    const found = await fixture.client.sales.list({ externalReference: sale.ExternalReference!, siteId: sale.SiteId! });
    expect(found.map((s) => s.Id)).toEqual([42]);
  });

  it('passes every customer and payment filter of the spec', async () => {
    const { sale } = stored(77);
    const user = sale.UserData!;
    const filters = [
      { email: user.EMail! },
      { identificationNumber: user.IdNumber! },
      { lastDigitsPhone: user.Phone!.replace(/\D/g, '').slice(-4) },
      { postalCode: user.PostalCode! },
      { fullName: user.LastName! },
      { subStatus: sale.SubStatus! },
      { payMethodId: sale.PayMethodId! },
    ];
    for (const filter of filters) {
      const found = await fixture.client.sales.list({ ...filter, limit: 1000 });
      expect(found.map((s) => s.Id), JSON.stringify(filter)).toContain(77);
    }
  });

  it('reads every sale with its nested objects and keeps fields the schema does not name', async () => {
    const [sale] = await fixture.client.sales.list({ externalReference: stored(5).sale.ExternalReference!, siteId: stored(5).sale.SiteId! });
    expect(sale?.PayMethod?.Id).toBe(stored(5).sale.PayMethodId);
    expect(sale?.Items?.length).toBeGreaterThan(0);
    expect(sale?.Currency?.Code).toBeTruthy();
    expect(sale?.ShippingAddress?.Type).toBe(0);
    expect(sale?.BillingAddress?.Type).toBe(1);
    expect(Object.keys(sale!).length).toBe(Object.keys(stored(5).sale).length);
  });
});

describe('sales.iterate', () => {
  it('pages through 250 sales 50 at a time, each sale once', async () => {
    const ids: number[] = [];
    for await (const sale of fixture.client.sales.iterate({ pageSize: 50 })) ids.push(sale.Id);
    expect(ids).toHaveLength(250);
    expect(new Set(ids).size).toBe(250);
    // Five full pages, then the empty sixth one that ends the paging.
    expect(fixture.sim.counters().requests['GET /Api/Sale']).toBe(6);
  });

  it('stops with a warning when the store ignores offset', async () => {
    fixture.sim.faults.set({ ignoreOffset: true });
    const ids: number[] = [];
    for await (const sale of fixture.client.sales.iterate({ pageSize: 50 })) ids.push(sale.Id);
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
    expect(fixture.sim.counters().requests['GET /Api/Sale']).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(logLines.some((line) => line.includes('offset ignored'))).toBe(true);
  });

  it('delivers every sale from a store that caps limit at 20 while pageSize is 100', async () => {
    fixture.sim.faults.set({ saleLimitCap: 20 });
    const ids: number[] = [];
    for await (const sale of fixture.client.sales.iterate({ pageSize: 100 })) ids.push(sale.Id);
    expect(ids).toEqual(fixture.sim.state.sales.map((s) => s.sale.Id));
    // 13 short pages (the last one of 10), then the empty page that ends the paging.
    expect(fixture.sim.counters().requests['GET /Api/Sale']).toBe(14);
  });

  it('counts the stop, and tells the caller, when the store ignores offset', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const client = fixture.newClient({ metrics });
    fixture.sim.faults.set({ ignoreOffset: true });
    const stops: PagingStop[] = [];
    let count = 0;
    for await (const _ of client.sales.iterate({ pageSize: 50 }, { onPagingStop: (stop) => void stops.push(stop) })) count++;
    expect(count).toBe(50);
    expect(stops).toEqual([{ reason: 'repeated-page', pages: 2, offset: 50 }]);
    expect((await metrics.storePagingStopped.get()).values).toEqual([{ labels: { resource: 'sale', reason: 'repeated-page' }, value: 1 }]);
  });

  it('stops after maxPages with a warning, the counter and onPagingStop', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const client = fixture.newClient({ metrics, logger });
    const stops: PagingStop[] = [];
    const ids: number[] = [];
    for await (const sale of client.sales.iterate({ pageSize: 50, maxPages: 3 }, { onPagingStop: (stop) => void stops.push(stop) })) {
      ids.push(sale.Id);
    }
    expect(ids).toHaveLength(150);
    expect(stops).toEqual([{ reason: 'max-pages', pages: 3, offset: 150 }]);
    expect((await metrics.storePagingStopped.get()).values).toEqual([{ labels: { resource: 'sale', reason: 'max-pages' }, value: 1 }]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(logLines.some((line) => line.includes('sales paging stopped after 3 pages'))).toBe(true);
  });

  it('refuses a maxPages that is not a positive integer', async () => {
    await expect(fixture.client.sales.iterate({ maxPages: 0 }).next()).rejects.toBeInstanceOf(ValidationError);
  });

  it('sets aside a malformed sale, naming id, field, value and rule, and yields every other one', async () => {
    fixture.sim.faults.set({ malformedSaleIds: [5, 120], saleLimitCap: 20 });
    const rejects: RecordReject[] = [];
    const ids: number[] = [];
    for await (const sale of fixture.client.sales.iterate({ pageSize: 100 }, { onReject: (reject) => void rejects.push(reject) })) ids.push(sale.Id);
    expect(ids).toHaveLength(248);
    expect(ids).not.toContain(5);
    expect(rejects.map(({ resource, id, field, rule }) => ({ resource, id, field, rule }))).toEqual([
      { resource: 'sale', id: '5', field: 'Total', rule: READ_RULES.number },
      { resource: 'sale', id: '120', field: 'Total', rule: READ_RULES.number },
    ]);
    expect(rejects[0]!.value).toEqual({ Amount: stored(5).sale.Total });
  });

  it('reads a loosely typing store\'s sales as the same typed values', async () => {
    const typed = await fixture.client.sales.list({ limit: 1000 });
    fixture.sim.faults.set({ looseTypes: true });
    const loose = await fixture.client.sales.list({ limit: 1000 });
    const view = (sale: Sale) => ({
      Id: sale.Id,
      Status: sale.Status,
      Total: sale.Total,
      SiteId: sale.SiteId,
      Access: sale.UserData?.Access,
      Enable: sale.PayMethod?.Enable,
      Lines: sale.Items?.map((line) => [line.Code, line.Quantity, line.Price, line.IsItem]),
    });
    expect(loose.map(view)).toEqual(typed.map(view));
    // Unknown fields are kept (and ignored).
    expect(loose[0]).toHaveProperty('ChannelData');
  });

  it('honours Retry-After from a 429 and goes on', async () => {
    const client = fixture.newClient({ onSleep: () => fixture.sim.faults.set({ rate429: 0 }) });
    await client.login();
    fixture.delays.length = 0;
    fixture.sim.faults.set({ rate429: 1 });
    const sales = await client.sales.list({ limit: 10 });
    expect(sales).toHaveLength(10);
    expect(fixture.delays).toEqual([1000]);
  });
});

describe('sales.get', () => {
  it('returns one sale whose dates parse to the instant the store recorded', async () => {
    const sale = await fixture.client.sales.get(33, { from: '2000-01-01', to: new Date() });
    expect(sale.Id).toBe(33);
    expect(parseStoreDate(sale.CreationDate, TZ)?.getTime()).toBe(Math.floor(stored(33).createdAtMs / 1000) * 1000);
  });

  it('throws StoreNotFoundError for an unknown id, without retrying', async () => {
    await expect(fixture.client.sales.get(999_999)).rejects.toBeInstanceOf(StoreNotFoundError);
    expect(fixture.sim.counters().requests['GET /Api/Sale/{id}']).toBe(1);
  });

  it('refuses an id that is not a positive integer before sending', async () => {
    await expect(fixture.client.sales.get(0)).rejects.toBeInstanceOf(ValidationError);
    expect(fixture.sim.counters().total).toBe(0);
  });
});

describe('sales.update', () => {
  it('sets status, tracking code and observations', async () => {
    await fixture.client.sales.update(12, { Status: 6, StatusText: 'Entregado', TrackingCode: 'TN1', Obeservations: 'ERP order 55' });
    expect(stored(12).sale).toMatchObject({ Status: 6, StatusText: 'Entregado', TrackingCode: 'TN1', Obeservations: 'ERP order 55' });
    expect(fixture.sim.saleUpdates.at(-1)).toMatchObject({ saleId: 12 });
  });

  it('refuses a misspelt field or another Id before sending', async () => {
    const typo = await fixture.client.sales
      .update(12, { Observations: 'x' } as unknown as { Obeservations: string })
      .catch((e: unknown) => e);
    expect(typo).toBeInstanceOf(ValidationError);
    expect((typo as ValidationError).issues[0]).toMatchObject({ record: 'sale 12', field: 'Observations' });
    await expect(fixture.client.sales.update(12, { Id: 13, Status: 2 })).rejects.toThrow(/equal to the sale id 12/);
    expect(fixture.sim.counters().total).toBe(0);
  });
});
