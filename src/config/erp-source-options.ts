/**
 * Options of ERP sources about how their values are read: the zone of timestamps without one and what a
 * fractional stock becomes (README, "Connecting an ERP"). Optional in the types (literal configs in code
 * need not name them); the sources apply the defaults.
 */
import { z } from 'zod';

import { isTimeZone } from '../time-zone.js';

/** An IANA time zone Intl knows (`Europe/Madrid`), or `UTC`. */
const ianaZone = z.string().refine(isTimeZone, 'an IANA time zone such as "Europe/Madrid", or "UTC"');

/**
 * The zone of timestamp columns without one (DATETIME, timestamp without time zone), whatever the
 * process's TZ. @defaultValue 'UTC'
 */
export const timeZone = ianaZone.optional();

/**
 * What a Stock that is not a whole number (5.5 kg) becomes: `floor` (never publish more than there is),
 * `round` (half up), or `reject` (the Stock field alone is refused; the rest of the row flows).
 * @defaultValue 'floor'
 */
export const stockRounding = z.enum(['floor', 'round', 'reject']).optional();
