/** Seeded users and clients. */
import { formatLocalIso } from './clock.js';
import { generatePerson } from './people.js';
import type { Random } from './random.js';
import type { Client, User } from './types.js';
import { PRICE_LISTS } from './vocabulary.js';

const DAY_MS = 86_400_000;

/** A user with its creation password (kept apart: the API never returns it). */
export interface StoredUser {
  user: User;
  password: string;
}

/** Generates `count` users with ids 1..count. */
export function generateUsers(rng: Random, count: number, baseTime: number, timeZone: string): StoredUser[] {
  const out: StoredUser[] = [];
  for (let id = 1; id <= count; id += 1) {
    const p = generatePerson(rng, id);
    const created = baseTime - rng.int(30, 900) * DAY_MS;
    const lastLogin = rng.chance(0.8) ? baseTime - rng.int(0, 29) * DAY_MS - rng.int(0, DAY_MS - 1) : null;
    out.push({
      user: {
        Id: id,
        Username: p.email,
        SiteId: 1,
        FirstName: p.firstName,
        LastName: p.lastName,
        EMail: p.email,
        Access: rng.chance(0.9),
        UILang: 'es-AR',
        CurrentLoginDate: lastLogin === null ? null : formatLocalIso(lastLogin, timeZone),
        LastLoginDate: lastLogin === null ? null : formatLocalIso(lastLogin - rng.int(1, 60) * DAY_MS, timeZone),
        CurrentLoginIp: lastLogin === null ? null : `181.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
        LastLoginIp: lastLogin === null ? null : `190.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
        CreationDate: formatLocalIso(created, timeZone),
        Address: `${p.street} ${p.streetNumber}`,
        State: p.stateCode,
        City: p.city,
        Country: 'AR',
        Town: p.city,
        PostalCode: p.postalCode,
        Phone: p.phone,
        Mobile: p.mobile,
        IdNumber: p.idNumber,
        ProfileId: rng.pick([1, 1, 1, 2]),
        PriceListId: rng.pick(PRICE_LISTS).id,
        InternalCode: `CLI-${String(id).padStart(5, '0')}`,
        ExternalLoginCode: null,
        Birthday: formatLocalIso(p.birthdayMs, timeZone),
        Preferences: [],
      },
      password: `secreto-${rng.digits(6)}`,
    });
  }
  return out;
}

/** Generates `count` clients with ids 1..count. */
export function generateClients(rng: Random, count: number, baseTime: number, timeZone: string): Client[] {
  const out: Client[] = [];
  for (let id = 1; id <= count; id += 1) {
    const p = generatePerson(rng, 10_000 + id);
    const company = rng.chance(0.3);
    out.push({
      Id: id,
      Name: company ? `${p.lastName} Hermanos S.R.L.` : `${p.firstName} ${p.lastName}`,
      Email: p.email,
      IdType: company ? 'CUIT' : 'DNI',
      IdNumber: company ? `30-${p.idNumber}-${rng.int(0, 9)}` : p.idNumber,
      Phone: p.phone,
      Address: `${p.street} ${p.streetNumber}`,
      City: p.city,
      State: p.state,
      PostalCode: p.postalCode,
      Country: 'Argentina',
      TaxCondition: company ? 'Responsable Inscripto' : rng.pick(['Consumidor Final', 'Monotributista']),
      PriceListId: company ? 2 : 1,
      Active: rng.chance(0.95),
      CreationDate: formatLocalIso(baseTime - rng.int(1, 1000) * DAY_MS, timeZone),
    });
  }
  return out;
}
