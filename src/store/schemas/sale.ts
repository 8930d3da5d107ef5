/** Schemas of a sale, its parts, and the sale update body. */
import { z } from 'zod';

import { bool, contactFields, int, looseInt, num, storeDate, str } from './fields.js';

/** Payment method of a sale. */
export const payMethodSchema = z.looseObject({
  Id: int,
  Name: str,
  Description: str,
  SiteControlName: str,
  ConfigControlName: str,
  Enable: bool,
  Selected: bool,
});

/** Currency of a sale or a sale item. */
export const currencySchema = z.looseObject({
  Id: int,
  Name: str,
  Code: str,
  DisplayName: str,
  Value: num,
  IsDefault: bool,
  SiteId: int,
});

/** Shipping method of a sale. */
export const shippingMethodSchema = z.looseObject({ Id: int, Name: str, Code: str, Display: str });
/** Customer data inside a sale. */
export const userDataSchema = z.looseObject({
  Id: int,
  Username: str,
  FirstName: str,
  LastName: str,
  EMail: str,
  Access: bool,
  ...contactFields,
  StreetNumber: str,
  AddressLine1: str,
  AddressLine2: str,
  Birthday: storeDate,
});

/** Billing or shipping address of a sale (Type 0 = shipping, 1 = billing). */
export const addressSchema = z.looseObject({
  Type: int,
  Default: bool,
  Name: str,
  Street: str,
  Country: str,
  State: str,
  City: str,
  Town: str,
  PostalCode: str,
  Phone: str,
  StreetNumber: str,
  AddressLine1: str,
  AddressLine2: str,
  CountryName: str,
  StateName: str,
  CityName: str,
  TownName: str,
  CountryCode: str,
  StateCode: str,
  CityCode: str,
  TownCode: str,
  IdNumber: str,
  Email: str,
});
export type Address = z.infer<typeof addressSchema>;

/** One line of a sale. */
export const saleItemSchema = z.looseObject({
  Id: int,
  ItemId: int,
  Code: str,
  PriceCode: str,
  PriceId: int,
  Price: num,
  Quantity: num,
  SaleId: int,
  CurrencyId: int,
  IsItem: bool,
  Name: str,
  ReferenceId: int,
  SaleItemType: int,
  Currency: currencySchema.nullish(),
  IsCombo: bool,
  ProviderId: int,
  Preferences: z.unknown().optional(),
});
export type SaleItem = z.infer<typeof saleItemSchema>;

/** A sale (order). `Id` is the key; everything else is read tolerantly. */
export const saleSchema = z.looseObject({
  Id: looseInt,
  InternalCode: str,
  PayMethodId: int,
  PayMethod: payMethodSchema.nullish(),
  Total: num,
  Status: int,
  StatusText: str,
  OperationStatus: int,
  OperationStatusText: str,
  UserId: int,
  UserData: userDataSchema.nullish(),
  BillingAddress: addressSchema.nullish(),
  ShippingAddress: addressSchema.nullish(),
  CreationDate: storeDate,
  ModificationDate: storeDate,
  Obeservations: str,
  Message: str,
  SiteId: int,
  ShippingCost: num,
  Lat: z.union([z.string(), z.number()]).nullish(),
  Lng: z.union([z.string(), z.number()]).nullish(),
  ShippingId: int,
  GatewayResponseCode: str,
  GatewayResponseMessage: str,
  RetryAttempt: int,
  IpFrom: str,
  Payments: int,
  GatewayOrderNumber: str,
  OtherCost: num,
  CurrencyId: int,
  Currency: currencySchema.nullish(),
  VendorId: int,
  Taxes: num,
  Discount: num,
  InvoiceNumber: str,
  TrackingCode: str,
  CardName: str,
  DeliveryDate: storeDate,
  MarketingEventDate: storeDate,
  MarketingPurchaseEventDate: storeDate,
  MarketingCrossellEventDate: storeDate,
  Items: z.array(saleItemSchema).nullish(),
  Company: str,
  IVA: str,
  NombreFantasia: str,
  SitioWeb: str,
  Truck: str,
  GatewayMessage: str,
  SetNewStatus: z.union([z.string(), z.number()]).nullish(),
  SetNewOperationStatus: z.union([z.string(), z.number()]).nullish(),
  Preferences: z.unknown().optional(),
  ShippingMethod: shippingMethodSchema.nullish(),
  ExternalDate: storeDate,
  BoxWidth: num,
  BoxLength: num,
  BoxHeight: num,
  BoxWeight: num,
  Volume: num,
  BoxLengthUnits: z.unknown().optional(),
  BoxWeightUnits: z.unknown().optional(),
  SubStatus: int,
  ExternalReference: str,
  SearchFirstLastName: str,
  SearchEmail: str,
  SearchPhone: str,
  SearchPostalCode: str,
  TotalPaidAmount: num,
  TaxPayments: num,
  Providers: z.unknown().optional(),
  Utm: str,
  UtmParameters: z.unknown().optional(),
});
export type Sale = z.infer<typeof saleSchema>;

/** Body of `PUT /Api/Sale/{id}`: all optional; the client fills `Id` from the path. */
export const saleUpdateSchema = z.strictObject({
  Id: z.number().int().positive().optional(),
  Status: z.number().int().optional(),
  StatusText: z.string().optional(),
  OperationStatus: z.number().int().optional(),
  TrackingCode: z.string().optional(),
  Obeservations: z.string().optional(),
  Message: z.string().optional(),
});
export type SaleUpdate = z.infer<typeof saleUpdateSchema>;
