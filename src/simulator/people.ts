/** Seeded people and addresses, shared by users, clients and sale customers. */
import type { Random } from './random.js';
import { FIRST_NAMES, LAST_NAMES, MAIL_DOMAINS, PLACES, STREETS } from './vocabulary.js';

/** A generated person with an Argentine address. */
export interface Person {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  mobile: string;
  idNumber: string;
  street: string;
  streetNumber: string;
  city: string;
  state: string;
  stateCode: string;
  postalCode: string;
  birthdayMs: number;
}

/** Lower-case ASCII for e-mail addresses and searches ("Núñez" → "nunez"). */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{Diacritic}/gu, '').toLowerCase();
}

/** A new person; `n` keeps e-mail addresses unique. */
export function generatePerson(rng: Random, n: number): Person {
  const firstName = rng.pick(FIRST_NAMES);
  const lastName = rng.pick(LAST_NAMES);
  const place = rng.pick(PLACES);
  const area = rng.pick(['11', '221', '351', '341', '261', '381', '299']);
  return {
    firstName,
    lastName,
    email: `${fold(firstName)}.${fold(lastName).replace(/\s+/g, '')}${n}@${rng.pick(MAIL_DOMAINS)}`,
    phone: `+54 ${area} ${rng.digits(4)}-${rng.digits(4)}`,
    mobile: `+54 9 ${area} ${rng.digits(4)}-${rng.digits(4)}`,
    idNumber: String(rng.int(20_000_000, 45_999_999)),
    street: rng.pick(STREETS),
    streetNumber: String(rng.int(1, 5999)),
    city: rng.pick(place.cities),
    state: place.state,
    stateCode: place.stateCode,
    postalCode: `${place.postal}${rng.digits(4 - place.postal.length)}`,
    // Adults born between 1950 and 2005.
    birthdayMs: Date.UTC(rng.int(1950, 2005), rng.int(0, 11), rng.int(1, 28), 12),
  };
}
