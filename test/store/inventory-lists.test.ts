import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { StoreBadRequestError, StoreNotFoundError } from '../../src/store/errors.js';
import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture;

beforeAll(async () => {
  fixture = await storeFixture({
    items: [{ Code: 'CL-1', Stock: 10, Price: 100, OfferPrice: 110 }, { Code: 'CL-2', Stock: 3, Price: 20, OfferPrice: 25 }],
    sales: 0,
    users: 1,
    itemsPerSite: [1, 2],
    priceLists: [{ id: 1, code: 'RETAIL' }, { id: 2, code: 'WHOLESALE' }],
  });
});

afterAll(async () => {
  await fixture.close();
});

beforeEach(async () => {
  fixture.sim.reset();
  await fixture.client.login();
});

describe('inventory client against a store with sites and price lists', () => {
  it('writes one price list by PriceListCode or PriceListId and reads it back with pricelistId', async () => {
    await fixture.client.inventory.update({ Code: 'CL-1', PriceListCode: 'WHOLESALE', Price: 90 });
    await fixture.client.inventory.update({ Code: 'CL-2', PriceListId: 2, Price: 15, OfferPrice: 18 });
    const wholesale = await fixture.client.inventory.get({ pricelistId: 2, siteId: 1 });
    expect(wholesale.map((i) => [i.Code, i.Price, i.OfferPrice, i.PriceListCode])).toEqual([
      ['CL-1', 90, 110, 'WHOLESALE'],
      ['CL-2', 15, 18, 'WHOLESALE'],
    ]);
    const retail = await fixture.client.inventory.get({ pricelistId: 1, siteId: 1 });
    expect(retail.map((i) => i.Price)).toEqual([100, 20]);
  });

  it('writes one site\'s copy by SiteId and reads it back with siteId', async () => {
    await fixture.client.inventory.update({ Code: 'CL-1', SiteId: 2, Stock: 4, Published: true });
    const [onTwo] = await fixture.client.inventory.get({ code: 'CL-1', siteId: 2 });
    expect(onTwo).toMatchObject({ Code: 'CL-1', SiteId: 2, Stock: 4, Published: true });
    const [onOne] = await fixture.client.inventory.get({ code: 'CL-1', siteId: 1 });
    expect(onOne).toMatchObject({ Code: 'CL-1', SiteId: 1, Stock: 10 });
  });

  it('gets a bad-request error naming the list for an unknown price list, and not-found for a site without the item', async () => {
    const unknownList = fixture.client.inventory.update({ Code: 'CL-1', PriceListCode: 'VIP', Price: 1 });
    await expect(unknownList).rejects.toBeInstanceOf(StoreBadRequestError);
    await expect(unknownList).rejects.toThrow(/PriceListCode/);
    await expect(fixture.client.inventory.get({ pricelistId: 9 })).rejects.toBeInstanceOf(StoreBadRequestError);
    await expect(fixture.client.inventory.update({ Code: 'CL-1', SiteId: 5, Stock: 1 })).rejects.toBeInstanceOf(StoreNotFoundError);
  });
});
