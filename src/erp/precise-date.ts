/**
 * A Date that keeps the microseconds of its millisecond. ERP timestamp columns are microsecond-precise
 * (PostgreSQL `timestamp(6)`, MariaDB `DATETIME(6)`); a plain Date would truncate them, and a cursor
 * truncated to the millisecond pages badly: `(cursor, code) > (:cursor, :afterKey)` then reads the same
 * rows again (every row of that millisecond is "after" it). The SQL client reads timestamps as
 * PreciseDates and binds them with their microseconds; everything that only knows Date still works.
 */

/** A Date plus the microseconds (0–999) within its millisecond. */
export class PreciseDate extends Date {
  /** Microseconds within the millisecond, 0–999. */
  readonly micros: number;

  /** The instant `epochMicros` (microseconds since the epoch, an exact integer up to year 2255). */
  constructor(epochMicros: number) {
    const ms = Math.floor(epochMicros / 1000);
    super(ms);
    this.micros = epochMicros - ms * 1000;
  }

  /** ISO 8601 in UTC: milliseconds only when the microseconds are zero (as a Date writes it), else six digits. */
  override toISOString(): string {
    const iso = super.toISOString();
    return this.micros === 0 ? iso : `${iso.slice(0, -1)}${String(this.micros).padStart(3, '0')}Z`;
  }

  override toJSON(): string {
    return this.toISOString();
  }
}

/** Microseconds since the epoch of a Date (a PreciseDate keeps its microseconds). */
export function epochMicros(date: Date): number {
  return date.getTime() * 1000 + (date instanceof PreciseDate ? date.micros : 0);
}

/** A Date for `epochMicros`: a plain Date on a whole millisecond, a PreciseDate otherwise. */
export function dateOfMicros(micros: number): Date {
  return micros % 1000 === 0 ? new Date(micros / 1000) : new PreciseDate(micros);
}
