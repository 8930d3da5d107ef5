/**
 * zod schemas of every store resource, the single source of truth for their TypeScript types.
 * Responses are read tolerantly: every object keeps unknown fields (`z.looseObject`), documented fields
 * are optional and may be null, and numbers the store sends as numeric strings are accepted as numbers.
 * Dates stay as the store wrote them; read them with `parseStoreDate(value, store.timeZone)`.
 */
import { z } from 'zod';

/** A number, or a numeric string (older services quote decimals), read as a number. */
const looseNumber = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value),
  z.number(),
);
const num = looseNumber.nullish();
const int = looseNumber.pipe(z.number().int()).nullish();
const str = z.string().nullish();
const bool = z.boolean().nullish();
/** A date in one of the store's shapes (see dates.ts), kept as written. */
const storeDate = z.union([z.string(), z.number()]).nullish();

/** Response of `GET /Api/Auth/`: `data` is the hash; `status` "0" (or 0, or absent) is success. */
export const authResultSchema = z.looseObject({
  status: z.union([z.string(), z.number()]).nullish(),
  message: str,
  data: str,
  site: int,
});
export type AuthResult = z.infer<typeof authResultSchema>;

/** A custom attribute of an inventory item. */
export const propertySchema = z.looseObject({ Key: z.string(), Value: z.string().nullable() });

/** An extended warranty offered with an inventory item. */
export const extendedWarrantySchema = z.looseObject({
  Name: str,
  Price: num,
  Active: bool,
  Cant: int,
  Code: str,
});

/** An inventory item as the inventory query returns it. `Code` is the key. */
export const inventoryItemSchema = z.looseObject({
  InternalId: int,
  Code: z.string(),
  Stock: num,
  Price: num,
  OfferPrice: num,
  Taxes: num,
  ForSale: bool,
  Published: bool,
  IsItem: bool,
  ParentItemId: int,
  ParentItemCode: str,
  PriceListId: int,
  PriceListCode: str,
  PriceMode: int,
  PrecioOriginal: z.union([z.string(), z.number()]).nullish(),
  DepStock: z.union([z.string(), z.number()]).nullish(),
  Properties: z.array(propertySchema).nullish(),
  Name: str,
  Code2: str,
  ExternalReference: str,
  SiteId: int,
  // The query endpoint's listing types it as "null or object", the field reference as an array.
  ExtendedWarranty: z.unknown().optional(),
});
export type InventoryItem = z.infer<typeof inventoryItemSchema>;

const rule = (text: string) => ({ error: text });
/** The rules of the spec's Limits table, worded as they appear in a ValidationError. */
export const INVENTORY_RULES = {
  InternalId: 'always 0',
  Code: 'required non-empty string',
  Stock: 'integer 0 to 999999',
  Price: 'number 0.01 to 999999.99 with at most 2 decimals',
  Taxes: 'percentage 0 to 100',
  boolean: 'true or false',
  PriceMode: '0 or null',
  positiveInt: 'positive integer',
  string: 'string',
  nullableString: 'string or null',
  nullableInt: 'integer or null',
  Properties: 'array of {Key, Value} strings',
  ExtendedWarranty: 'array of {Name, Price, Active, Cant, Code}',
} as const;

function hasAtMostTwoDecimals(value: number): boolean {
  return Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
}

const money = z
  .number(rule(INVENTORY_RULES.Price))
  .min(0.01, rule(INVENTORY_RULES.Price))
  .max(999999.99, rule(INVENTORY_RULES.Price))
  .refine(hasAtMostTwoDecimals, rule(INVENTORY_RULES.Price));
const flag = z.boolean(rule(INVENTORY_RULES.boolean));
const positiveId = z.number(rule(INVENTORY_RULES.positiveInt)).int(rule(INVENTORY_RULES.positiveInt)).positive(rule(INVENTORY_RULES.positiveInt));
const text = z.string(rule(INVENTORY_RULES.string));

/**
 * The body of an inventory update or creation, with the spec's rules. Only `Code` is required; fields
 * left out stay unchanged on the store. `InternalId` is always sent as 0 (the client sets it). Unknown
 * fields are refused: a misspelt field would otherwise be ignored by the store without a word.
 */
export const inventoryUpdateSchema = z.strictObject({
  InternalId: z.literal(0, rule(INVENTORY_RULES.InternalId)).optional(),
  Code: z.string(rule(INVENTORY_RULES.Code)).trim().min(1, rule(INVENTORY_RULES.Code)),
  Stock: z
    .number(rule(INVENTORY_RULES.Stock))
    .int(rule(INVENTORY_RULES.Stock))
    .min(0, rule(INVENTORY_RULES.Stock))
    .max(999999, rule(INVENTORY_RULES.Stock))
    .optional(),
  Price: money.optional(),
  OfferPrice: money.optional(),
  Taxes: z.number(rule(INVENTORY_RULES.Taxes)).min(0, rule(INVENTORY_RULES.Taxes)).max(100, rule(INVENTORY_RULES.Taxes)).optional(),
  ForSale: flag.optional(),
  Published: flag.optional(),
  IsItem: flag.optional(),
  ParentItemId: z.number(rule(INVENTORY_RULES.nullableInt)).int(rule(INVENTORY_RULES.nullableInt)).nullable().optional(),
  ParentItemCode: z.string(rule(INVENTORY_RULES.nullableString)).nullable().optional(),
  PriceListId: positiveId.optional(),
  PriceListCode: z.string(rule(INVENTORY_RULES.nullableString)).nullable().optional(),
  PriceMode: z.literal(0, rule(INVENTORY_RULES.PriceMode)).nullable().optional(),
  PrecioOriginal: text.optional(),
  DepStock: text.optional(),
  Properties: z
    .array(z.object({ Key: z.string(), Value: z.string() }), rule(INVENTORY_RULES.Properties))
    .optional(),
  Name: text.optional(),
  Code2: text.optional(),
  ExternalReference: text.optional(),
  SiteId: positiveId.optional(),
  ExtendedWarranty: z
    .array(
      z.object({
        Name: z.string().optional(),
        Price: z.number().optional(),
        Active: z.boolean().optional(),
        Cant: z.number().int().optional(),
        Code: z.string().optional(),
      }),
      rule(INVENTORY_RULES.ExtendedWarranty),
    )
    .optional(),
});
export type InventoryUpdate = z.infer<typeof inventoryUpdateSchema>;
/** What callers pass: `InternalId` may be left out (the client always sends 0). */
export type InventoryUpdateInput = z.input<typeof inventoryUpdateSchema>;

/** Result of an inventory update: `{Success, Message}` (an empty body counts as success). */
export const inventoryUpdateResultSchema = z.looseObject({ Success: bool, Message: str });
export type InventoryUpdateResult = z.infer<typeof inventoryUpdateResultSchema>;

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

/** The contact fields a user and a sale's customer data share (State, City, Country, Town carry codes). */
const contactFields = {
  Address: str,
  State: str,
  City: str,
  Country: str,
  Town: str,
  PostalCode: str,
  Phone: str,
  Mobile: str,
  IdNumber: str,
};

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
  Id: looseNumber.pipe(z.number().int()),
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

/** A back-office user. */
export const userSchema = z.looseObject({
  Id: int,
  Username: str,
  SiteId: int,
  FirstName: str,
  LastName: str,
  EMail: str,
  Access: bool,
  UILang: str,
  CurrentLoginDate: storeDate,
  LastLoginDate: storeDate,
  CurrentLoginIp: str,
  LastLoginIp: str,
  CreationDate: storeDate,
  ...contactFields,
  ProfileId: int,
  PriceListId: int,
  InternalCode: str,
  ExternalLoginCode: str,
  Birthday: storeDate,
  Preferences: z.unknown().optional(),
});
export type User = z.infer<typeof userSchema>;

/** Writable fields of a user (the service sets the login and creation fields). */
const userWriteFields = {
  Username: z.string().optional(),
  Password: z.string().optional(),
  SiteId: z.number().int().positive().optional(),
  FirstName: z.string().optional(),
  LastName: z.string().optional(),
  EMail: z.string().optional(),
  Access: z.boolean().optional(),
  UILang: z.string().optional(),
  Address: z.string().optional(),
  State: z.string().optional(),
  City: z.string().optional(),
  Country: z.string().optional(),
  Town: z.string().optional(),
  PostalCode: z.string().optional(),
  Phone: z.string().optional(),
  Mobile: z.string().optional(),
  IdNumber: z.string().optional(),
  ProfileId: z.number().int().optional(),
  PriceListId: z.number().int().optional(),
  InternalCode: z.string().optional(),
  ExternalLoginCode: z.string().nullable().optional(),
  Birthday: z.string().optional(),
  Preferences: z.array(z.unknown()).optional(),
};

/** Body of `POST /Api/User`: Username, FirstName, LastName, EMail and Password are required. */
const required = z.string(rule('required non-empty string')).trim().min(1, rule('required non-empty string'));
export const userCreateSchema = z.looseObject({
  ...userWriteFields,
  Username: required,
  FirstName: required,
  LastName: required,
  EMail: required,
  Password: z.string(rule('required non-empty string')).min(1, rule('required non-empty string')),
});
export type UserCreate = z.infer<typeof userCreateSchema>;

/** Body of `PUT /Api/User/{id}`: `Id` is required; only the fields sent change. */
export const userUpdateSchema = z.looseObject({
  ...userWriteFields,
  Id: z.number(rule('required positive integer')).int(rule('required positive integer')).positive(rule('required positive integer')),
});
export type UserUpdate = z.infer<typeof userUpdateSchema>;

/** Values of `fields` in the user search. */
export const USER_SEARCH_FIELDS = ['UserName', 'FirstName', 'LastName', 'IdNumber', 'InternalCode', 'PriceList', 'None'] as const;
export type UserSearchField = (typeof USER_SEARCH_FIELDS)[number];

/** A client record: the spec does not show its fields, so every field is kept as received. */
export const clientSchema = z.looseObject({});
export type Client = z.infer<typeof clientSchema>;

/** A product record: the spec does not show its fields, so every field is kept as received. */
export const productSchema = z.looseObject({});
export type Product = z.infer<typeof productSchema>;
