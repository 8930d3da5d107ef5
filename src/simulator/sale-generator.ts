/** Seeded sales with every nested object of the spec (payment, currency, customer, addresses, lines). */
import type { StoredUser } from './account-generator.js';
import { formatStoreDate } from './clock.js';
import { fold, generatePerson, type Person } from './people.js';
import type { Random } from './random.js';
import type { Currency, Sale, SaleAddress, SaleItem, SaleUserData, SimItem } from './types.js';
import { PAY_METHODS, SALE_STATUSES, SHIPPING_METHODS } from './vocabulary.js';

/** A sale with the instant it was created (filters compare instants, not text). */
export interface StoredSale {
  sale: Sale;
  createdAtMs: number;
}

/** What generating one sale needs from the store. */
export interface SaleContext {
  rng: Random;
  timeZone: string;
  /** Items a sale line may reference. */
  pickItem(): SimItem | undefined;
  /** Existing users; a sale belongs to one of them, or to a guest when empty. */
  users: readonly StoredUser[];
  /** Next id of a sale line (unique across sales). */
  nextLineId(): number;
}

function currency(siteId: number): Currency {
  return { Id: 1, Name: 'Peso argentino', Code: 'ARS', DisplayName: '$', Value: 1, IsDefault: true, SiteId: siteId };
}

function customerOf(ctx: SaleContext, id: number): { userId: number; person: Person; username: string } {
  const stored = ctx.users.length > 0 && ctx.rng.chance(0.85) ? ctx.rng.pick(ctx.users) : undefined;
  const person = generatePerson(ctx.rng, 50_000 + id);
  if (!stored) return { userId: 0, person, username: person.email };
  const u = stored.user;
  return {
    userId: u.Id,
    username: u.Username,
    person: { ...person, firstName: u.FirstName, lastName: u.LastName, email: u.EMail, phone: u.Phone, mobile: u.Mobile, idNumber: u.IdNumber },
  };
}

function address(p: Person, type: number): SaleAddress {
  return {
    Type: type,
    Default: true,
    Name: `${p.firstName} ${p.lastName}`,
    Street: p.street,
    Country: 'AR',
    State: p.stateCode,
    City: p.city,
    Town: p.city,
    PostalCode: p.postalCode,
    Phone: p.phone,
    StreetNumber: p.streetNumber,
    AddressLine1: `${p.street} ${p.streetNumber}`,
    AddressLine2: '',
    CountryName: 'Argentina',
    StateName: p.state,
    CityName: p.city,
    TownName: p.city,
    CountryCode: 'AR',
    StateCode: p.stateCode,
    CityCode: fold(p.city).replace(/\s+/g, '-').toUpperCase(),
    TownCode: fold(p.city).replace(/\s+/g, '-').toUpperCase(),
    IdNumber: p.idNumber,
    Email: p.email,
  };
}

function lines(ctx: SaleContext, saleId: number, siteId: number): SaleItem[] {
  const out: SaleItem[] = [];
  const count = ctx.rng.int(1, 4);
  for (let i = 0; i < count; i += 1) {
    const item = ctx.pickItem();
    if (!item) break;
    out.push({
      Id: ctx.nextLineId(),
      ItemId: item.InternalId,
      Code: item.Code,
      PriceCode: item.PriceListCode ?? 'MINORISTA',
      PriceId: item.PriceListId,
      Price: item.Price > 0 ? item.Price : ctx.rng.money(900, 50_000),
      Quantity: ctx.rng.pick([1, 1, 1, 2, 3]),
      SaleId: saleId,
      CurrencyId: 1,
      IsItem: true,
      Name: item.Name,
      ReferenceId: 0,
      SaleItemType: 0,
      Currency: currency(siteId),
      IsCombo: false,
      ProviderId: 0,
      Preferences: {},
    });
  }
  return out;
}

function pickStatus(rng: Random): { status: number; text: string } {
  const total = SALE_STATUSES.reduce((sum, s) => sum + s.weight, 0);
  let r = rng.next() * total;
  for (const s of SALE_STATUSES) {
    r -= s.weight;
    if (r < 0) return { status: s.status, text: s.text };
  }
  return { status: 0, text: 'Pendiente' };
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Generates sale `id` created at `createdAtMs`. */
export function generateSale(ctx: SaleContext, id: number, createdAtMs: number): StoredSale {
  const { rng, timeZone } = ctx;
  const siteId = rng.chance(0.8) ? 1 : rng.int(2, 3);
  const pay = rng.pick(PAY_METHODS);
  const ship = rng.pick(SHIPPING_METHODS);
  const { userId, person, username } = customerOf(ctx, id);
  const { status, text } = pickStatus(rng);
  const items = lines(ctx, id, siteId);
  const subtotal = round2(items.reduce((sum, l) => sum + l.Price * l.Quantity, 0));
  const discount = rng.chance(0.2) ? round2(subtotal * 0.1) : 0;
  const total = round2(subtotal - discount + ship.cost);
  const paid = status > 0 ? total : 0;
  const created = formatStoreDate(createdAtMs, timeZone);
  const modifiedMs = createdAtMs + rng.int(0, 3_600_000);
  const userData: SaleUserData = {
    Id: userId,
    Username: username,
    FirstName: person.firstName,
    LastName: person.lastName,
    EMail: person.email,
    Access: userId > 0,
    Address: `${person.street} ${person.streetNumber}`,
    State: person.stateCode,
    City: person.city,
    Country: 'AR',
    Town: person.city,
    PostalCode: person.postalCode,
    Phone: person.phone,
    Mobile: person.mobile,
    IdNumber: person.idNumber,
    StreetNumber: person.streetNumber,
    AddressLine1: `${person.street} ${person.streetNumber}`,
    AddressLine2: '',
    Birthday: formatStoreDate(person.birthdayMs, timeZone),
  };
  const sale: Sale = {
    Id: id,
    InternalCode: `V-${String(id).padStart(8, '0')}`,
    PayMethodId: pay.Id,
    PayMethod: {
      Id: pay.Id,
      Name: pay.Name,
      Description: pay.Description,
      SiteControlName: pay.control,
      ConfigControlName: `${pay.control}Config`,
      Enable: true,
      Selected: true,
    },
    Total: total,
    Status: status,
    StatusText: text,
    OperationStatus: status > 0 ? 1 : status < 0 ? -1 : 0,
    OperationStatusText: status > 0 ? 'Aprobada' : status < 0 ? 'Rechazada' : null,
    UserId: userId,
    UserData: userData,
    BillingAddress: address(person, 1),
    ShippingAddress: address(person, 0),
    CreationDate: created,
    ModificationDate: formatStoreDate(modifiedMs, timeZone),
    Obeservations: rng.chance(0.3) ? rng.pick(['Tocar timbre 2B', 'Dejar en portería', 'Entregar por la tarde', 'Regalo: no incluir factura']) : '',
    Message: '',
    SiteId: siteId,
    ShippingCost: ship.cost,
    Lat: (-34.6 + rng.next() * 0.2).toFixed(6),
    Lng: (-58.4 + rng.next() * 0.2).toFixed(6),
    ShippingId: ship.Id,
    GatewayResponseCode: status > 0 ? '00' : status < 0 ? '05' : '',
    GatewayResponseMessage: status > 0 ? 'Aprobada' : status < 0 ? 'Rechazada por el emisor' : '',
    RetryAttempt: 0,
    IpFrom: `186.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
    Payments: pay.Id === 4 ? rng.pick([1, 3, 6, 12]) : 1,
    GatewayOrderNumber: pay.Id === 1 || pay.Id === 4 ? rng.digits(11) : '',
    OtherCost: 0,
    CurrencyId: 1,
    Currency: currency(siteId),
    VendorId: 0,
    Taxes: round2(total - total / 1.21),
    Discount: discount,
    InvoiceNumber: status >= 3 ? `0001-${rng.digits(8)}` : '',
    TrackingCode: status >= 3 && ship.Id !== 1 ? `TN${rng.digits(9)}AR` : '',
    CardName: pay.Id === 4 ? `${person.firstName} ${person.lastName}`.toUpperCase() : '',
    DeliveryDate: status === 6 ? formatStoreDate(createdAtMs + rng.int(2, 7) * 86_400_000, timeZone) : null,
    MarketingEventDate: null,
    MarketingPurchaseEventDate: null,
    MarketingCrossellEventDate: null,
    Items: items,
    Company: '',
    IVA: 'Consumidor Final',
    NombreFantasia: '',
    SitioWeb: '',
    Truck: '',
    GatewayMessage: '',
    SetNewStatus: '',
    SetNewOperationStatus: '',
    Preferences: [],
    ShippingMethod: { Id: ship.Id, Name: ship.Name, Code: ship.Code, Display: ship.Display },
    ExternalDate: null,
    BoxWidth: rng.int(10, 60),
    BoxLength: rng.int(10, 60),
    BoxHeight: rng.int(5, 40),
    BoxWeight: round2(rng.next() * 10 + 0.2),
    Volume: 0,
    BoxLengthUnits: 0,
    BoxWeightUnits: 0,
    SubStatus: rng.pick([0, 0, 0, 1, 2]),
    ExternalReference: `WEB-${siteId}-${String(id).padStart(7, '0')}`,
    SearchFirstLastName: `${person.firstName} ${person.lastName}`,
    SearchEmail: person.email,
    SearchPhone: person.phone.replace(/\D/g, ''),
    SearchPostalCode: person.postalCode,
    TotalPaidAmount: paid,
    TaxPayments: 0,
    Providers: [],
    Utm: rng.chance(0.3) ? 'utm_source=instagram' : '',
    UtmParameters: {},
  };
  sale.Volume = round2(sale.BoxWidth * sale.BoxLength * sale.BoxHeight);
  return { sale, createdAtMs };
}
