/** Schemas of a back-office user: as read, and the bodies of its creation and update. */
import { z } from 'zod';

import { bool, contactFields, int, rule, storeDate, str } from './fields.js';

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

/** True for a real calendar day written YYYY-MM-DD, optionally with a time and no zone. */
function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?)?$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const BIRTHDAY_RULE = 'a date as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (ISO 8601 without zone)';

/** Writable fields of a user (the service sets Id, the login and creation fields; Password is for creation). */
const userWriteFields = {
  Username: z.string().optional(),
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
  Birthday: z.string(rule(BIRTHDAY_RULE)).refine(isDate, rule(BIRTHDAY_RULE)).nullable().optional(),
  Preferences: z.array(z.unknown()).optional(),
};

/** Body of `POST /Api/User`: Username, FirstName, LastName, EMail and Password are required; unknown or
 * service-set fields (Id, CreationDate, login dates and IPs) are refused. */
const required = z.string(rule('required non-empty string')).trim().min(1, rule('required non-empty string'));
export const userCreateSchema = z.strictObject({
  ...userWriteFields,
  Username: required,
  FirstName: required,
  LastName: required,
  EMail: required,
  Password: z.string(rule('required non-empty string')).min(1, rule('required non-empty string')),
});
export type UserCreate = z.infer<typeof userCreateSchema>;

/**
 * Body of `PUT /Api/User/{id}`: `Id` is required; only the fields sent change. `Password` is refused: the
 * spec uses it "only on creation", so sending it would at best be ignored and at worst leak it.
 */
export const userUpdateSchema = z.strictObject({
  ...userWriteFields,
  Password: z.undefined(rule('only sent on creation (the spec: "Only used on creation")')).optional(),
  Id: z.number(rule('required positive integer')).int(rule('required positive integer')).positive(rule('required positive integer')),
});
export type UserUpdate = z.infer<typeof userUpdateSchema>;

/** Values of `fields` in the user search. */
export const USER_SEARCH_FIELDS = ['UserName', 'FirstName', 'LastName', 'IdNumber', 'InternalCode', 'PriceList', 'None'] as const;
export type UserSearchField = (typeof USER_SEARCH_FIELDS)[number];
