/**
 * The building blocks of the store's resource schemas. Responses are read tolerantly: every object keeps
 * unknown fields (`z.looseObject`), documented fields are optional and may be null, and numbers the store
 * sends as numeric strings are accepted as numbers. Dates stay as the store wrote them; read them with
 * `parseStoreDate(value, store.timeZone)`.
 */
import { z } from 'zod';

/** A number, or a numeric string (older services quote decimals), read as a number. */
export const looseNumber = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value),
  z.number(),
);
export const num = looseNumber.nullish();
export const int = looseNumber.pipe(z.number().int()).nullish();
export const str = z.string().nullish();
export const bool = z.boolean().nullish();
/** A date in one of the store's shapes (see dates.ts), kept as written. */
export const storeDate = z.union([z.string(), z.number()]).nullish();

/** A zod issue message that states the broken rule. */
export const rule = (text: string) => ({ error: text });

/** The contact fields a user and a sale's customer data share (State, City, Country, Town carry codes). */
export const contactFields = {
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
