/** A complete store sale, as the store client returns it, for the sink tests. */
import { type Sale, saleSchema } from '../../../src/store/schemas/index.js';

/** Sale `id` with two lines; `overrides` replace top-level fields. */
export function sampleSale(id: number, overrides: Partial<Sale> = {}): Sale {
  return saleSchema.parse({
    Id: id,
    InternalCode: `V-${id}`,
    PayMethodId: 4,
    PayMethod: { Id: 4, Name: 'Tarjeta de crédito', Description: 'Visa / Master' },
    Total: 15_230.5,
    Status: 1,
    StatusText: 'Confirmada',
    UserData: {
      FirstName: 'María José',
      LastName: 'Núñez',
      EMail: 'mj.nunez@example.com',
      IdNumber: '30123456',
      Phone: '+54 11 4444-5555',
    },
    BillingAddress: {
      Type: 1,
      Street: 'Av. Corrientes',
      StreetNumber: '1234',
      AddressLine2: '5° B',
      CityName: 'Buenos Aires',
      StateName: 'CABA',
      PostalCode: 'C1043',
      CountryName: 'Argentina',
    },
    ShippingAddress: {
      Type: 0,
      Name: 'María José Núñez',
      Street: 'Calle Falsa',
      StreetNumber: '742',
      City: 'Rosario',
      State: 'SF',
      PostalCode: '2000',
      Country: 'AR',
    },
    // 23:30 in Buenos Aires (UTC-3) is 02:30 UTC the next day.
    CreationDate: '03/14/2024 23:30:00',
    ModificationDate: '2024-03-15T08:00:00',
    SiteId: 1,
    ShippingCost: 1500,
    Taxes: 2643.3,
    Discount: 0,
    OtherCost: 0,
    Payments: 3,
    Currency: { Id: 1, Code: 'ARS' },
    ShippingMethod: { Id: 2, Name: 'Correo' },
    ExternalReference: `WEB-${id}`,
    Items: [
      { Id: 11, ItemId: 501, Code: 'MATE-01', Name: 'Mate de calabaza', Price: 4500, Quantity: 2, IsItem: true, SaleItemType: 0, IsCombo: false },
      { Id: 12, ItemId: 502, Code: 'BOMB-02', Name: 'Bombilla alpaca', Price: 4730.5, Quantity: 1, IsItem: true, SaleItemType: 0, Currency: { Code: 'ARS' } },
    ],
    ...overrides,
  });
}
