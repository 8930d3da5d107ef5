/**
 * The records the simulated store holds, shaped as the spec describes them (PascalCase JSON fields).
 * Where the spec does not show a shape (client, product, preferences) the simulator invents a plausible one,
 * documented on the type.
 */

/** A custom attribute of an item. */
export interface KeyValue {
  Key: string;
  Value: string;
}

/** An extended warranty offer of an item. */
export interface Warranty {
  Name: string;
  Price: number;
  Active: boolean;
  Cant: number;
  Code: string;
}

/** An inventory item as GET /Api/Inventory returns it; `InternalId` carries the store's item id. */
export interface SimItem {
  InternalId: number;
  Code: string;
  Stock: number;
  Price: number;
  OfferPrice: number;
  Taxes: number;
  ForSale: boolean;
  Published: boolean;
  IsItem: boolean;
  ParentItemId: number | null;
  ParentItemCode: string | null;
  PriceListId: number;
  PriceListCode: string | null;
  PriceMode: number | null;
  PrecioOriginal: string;
  DepStock: string;
  Properties: KeyValue[];
  Name: string;
  Code2: string;
  ExternalReference: string;
  SiteId: number;
  ExtendedWarranty: Warranty[];
}

/** An item to store: `Code` required, everything else defaulted. */
export type ItemInput = Partial<SimItem> & { Code: string };

/** Payment method of a sale. */
export interface PayMethod {
  Id: number;
  Name: string;
  Description: string;
  SiteControlName: string;
  ConfigControlName: string;
  Enable: boolean;
  Selected: boolean;
}

/** Currency of a sale or a sale line. */
export interface Currency {
  Id: number;
  Name: string;
  Code: string;
  DisplayName: string;
  Value: number;
  IsDefault: boolean;
  SiteId: number;
}

/** Contact fields shared by a user and a sale's customer data (State, City, Country, Town are codes). */
export interface ContactFields {
  Address: string;
  State: string;
  City: string;
  Country: string;
  Town: string;
  PostalCode: string;
  Phone: string;
  Mobile: string;
  IdNumber: string;
}

/** Customer data inside a sale. */
export interface SaleUserData extends ContactFields {
  Id: number;
  Username: string;
  FirstName: string;
  LastName: string;
  EMail: string;
  Access: boolean;
  StreetNumber: string;
  AddressLine1: string;
  AddressLine2: string;
  Birthday: string;
}

/** Billing (Type 1) or shipping (Type 0) address of a sale. */
export interface SaleAddress {
  Type: number;
  Default: boolean;
  Name: string;
  Street: string;
  Country: string;
  State: string;
  City: string;
  Town: string;
  PostalCode: string;
  Phone: string;
  StreetNumber: string;
  AddressLine1: string;
  AddressLine2: string;
  CountryName: string;
  StateName: string;
  CityName: string;
  TownName: string;
  CountryCode: string;
  StateCode: string;
  CityCode: string;
  TownCode: string;
  IdNumber: string;
  Email: string;
}

/** One line of a sale. */
export interface SaleItem {
  Id: number;
  ItemId: number;
  Code: string;
  PriceCode: string;
  PriceId: number;
  Price: number;
  Quantity: number;
  SaleId: number;
  CurrencyId: number;
  IsItem: boolean;
  Name: string;
  ReferenceId: number;
  SaleItemType: number;
  Currency: Currency;
  IsCombo: boolean;
  ProviderId: number;
  Preferences: Record<string, string>;
}

/** Shipping method of a sale. */
export interface ShippingMethod {
  Id: number;
  Name: string;
  Code: string;
  Display: string;
}

/** A sale with every field of the spec. Dates are `MM/DD/YYYY HH:MM:SS` in the store's time zone. */
export interface Sale {
  Id: number;
  InternalCode: string;
  PayMethodId: number;
  PayMethod: PayMethod;
  Total: number;
  Status: number;
  StatusText: string;
  OperationStatus: number;
  OperationStatusText: string | null;
  UserId: number;
  UserData: SaleUserData;
  BillingAddress: SaleAddress;
  ShippingAddress: SaleAddress;
  CreationDate: string;
  ModificationDate: string;
  Obeservations: string;
  Message: string;
  SiteId: number;
  ShippingCost: number;
  Lat: string;
  Lng: string;
  ShippingId: number;
  GatewayResponseCode: string;
  GatewayResponseMessage: string;
  RetryAttempt: number;
  IpFrom: string;
  Payments: number;
  GatewayOrderNumber: string;
  OtherCost: number;
  CurrencyId: number;
  Currency: Currency;
  VendorId: number;
  Taxes: number;
  Discount: number;
  InvoiceNumber: string;
  TrackingCode: string;
  CardName: string;
  DeliveryDate: string | null;
  MarketingEventDate: string | null;
  MarketingPurchaseEventDate: string | null;
  MarketingCrossellEventDate: string | null;
  Items: SaleItem[];
  Company: string;
  IVA: string;
  NombreFantasia: string;
  SitioWeb: string;
  Truck: string;
  GatewayMessage: string;
  SetNewStatus: string;
  SetNewOperationStatus: string;
  Preferences: KeyValue[];
  ShippingMethod: ShippingMethod;
  ExternalDate: string | null;
  BoxWidth: number;
  BoxLength: number;
  BoxHeight: number;
  BoxWeight: number;
  Volume: number;
  /** An enum whose members the spec does not show; 0 stands for centimetres. */
  BoxLengthUnits: number;
  /** An enum whose members the spec does not show; 0 stands for kilograms. */
  BoxWeightUnits: number;
  SubStatus: number;
  ExternalReference: string;
  SearchFirstLastName: string;
  SearchEmail: string;
  SearchPhone: string;
  SearchPostalCode: string;
  TotalPaidAmount: number;
  TaxPayments: number;
  Providers: Array<{ Id: number; Name: string }>;
  Utm: string;
  UtmParameters: Record<string, string>;
}

/** A store user. `Password` is kept for creation only and never returned. */
export interface User extends ContactFields {
  Id: number;
  Username: string;
  SiteId: number;
  FirstName: string;
  LastName: string;
  EMail: string;
  Access: boolean;
  UILang: string;
  CurrentLoginDate: string | null;
  LastLoginDate: string | null;
  CurrentLoginIp: string | null;
  LastLoginIp: string | null;
  CreationDate: string;
  ProfileId: number;
  PriceListId: number;
  InternalCode: string;
  ExternalLoginCode: string | null;
  Birthday: string | null;
  Preferences: KeyValue[];
}

/**
 * A client (customer account of the back office). The spec shows no fields; this record is invented:
 * `IdType` is DNI or CUIT, `TaxCondition` the Argentine VAT condition, dates ISO without zone.
 */
export interface Client {
  Id: number;
  Name: string;
  Email: string;
  IdType: string;
  IdNumber: string;
  Phone: string;
  Address: string;
  City: string;
  State: string;
  PostalCode: string;
  Country: string;
  TaxCondition: string;
  PriceListId: number;
  Active: boolean;
  CreationDate: string;
}

/**
 * A product as GET /Api/product returns it. The spec shows no fields; the simulator projects each
 * inventory item: `Id` is the item id, `ParentId` the parent's id for variants, `Status` is `active`
 * (published) or `inactive`.
 */
export interface Product {
  Id: number;
  Code: string;
  Name: string;
  ParentId: number | null;
  IsItem: boolean;
  Status: string;
  Price: number;
  Stock: number;
  SiteId: number;
  Brand: string;
  Category: string;
  CreationDate: string;
}
