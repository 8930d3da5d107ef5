/**
 * Store dates. The store writes dates in three shapes (`MM/DD/YYYY HH:MM:SS`, ISO 8601 without a zone,
 * .NET `/Date(ms)/`) and reads query dates as `YYYY-MM-DD`. Zone-less values are wall-clock times of the
 * store's configured zone; the offset comes from Intl (`src/time-zone.ts`) so a zone with DST (or a
 * changed rule) stays right.
 */
import { ValidationError } from '../errors.js';
import { zoneOffsetMs } from '../time-zone.js';

const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?)?$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const DOTNET_DATE = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/;
const QUERY_DATE = /^\d{4}-\d{2}-\d{2}$/;

const SHAPES = 'a date as MM/DD/YYYY HH:MM:SS, ISO 8601 or /Date(ms)/';

/** The instant at which the clocks of `timeZone` show the given wall time. */
function fromWallClock(wallAsUtc: number, timeZone: string): number {
  // Two passes: the offset at the first guess may differ from the one at the result around a DST change.
  const first = wallAsUtc - zoneOffsetMs(wallAsUtc, timeZone);
  return wallAsUtc - zoneOffsetMs(first, timeZone);
}

function invalid(value: unknown): ValidationError {
  return new ValidationError([{ field: 'date', value, rule: SHAPES }], 'store date');
}

function wallTime(year: number, month: number, day: number, hour: number, minute: number, second: number, ms = 0): number {
  const time = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(time);
  // Date.UTC rolls 02/30 over to March; a date the calendar does not have is not a date.
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return Number.NaN;
  }
  return time;
}

/**
 * Parses a date written by the store: `MM/DD/YYYY HH:MM:SS` (optionally with AM/PM), ISO 8601 (with or
 * without a zone) or `/Date(ms)/`. Zone-less values are read in `timeZone`. Returns null for an absent
 * value (null, undefined, empty string); throws ValidationError for anything else that is not a date.
 */
export function parseStoreDate(value: unknown, timeZone: string): Date | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw invalid(value);
  const text = value.trim();
  if (text === '') return null;

  const dotnet = DOTNET_DATE.exec(text);
  if (dotnet) return new Date(Number(dotnet[1]));

  const us = US_DATE.exec(text);
  if (us) {
    const [, month, day, year, hourText, minute, second, meridiem] = us;
    let hour = Number(hourText ?? 0);
    if (meridiem) {
      if (hour < 1 || hour > 12) throw invalid(value);
      hour = (hour % 12) + (/^p/i.test(meridiem) ? 12 : 0);
    }
    const wall = wallTime(Number(year), Number(month), Number(day), hour, Number(minute ?? 0), Number(second ?? 0));
    if (Number.isNaN(wall)) throw invalid(value);
    return new Date(fromWallClock(wall, timeZone));
  }

  const iso = ISO_DATE.exec(text);
  if (iso) {
    const [, year, month, day, hour, minute, second, fraction, zone] = iso;
    const ms = fraction ? Number(fraction.slice(0, 3).padEnd(3, '0')) : 0;
    const wall = wallTime(Number(year), Number(month), Number(day), Number(hour ?? 0), Number(minute ?? 0), Number(second ?? 0), ms);
    if (Number.isNaN(wall)) throw invalid(value);
    if (!zone) return new Date(fromWallClock(wall, timeZone));
    if (zone === 'Z') return new Date(wall);
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
    return new Date(wall - offset);
  }
  throw invalid(value);
}

/**
 * Formats a query date (`from`, `to`, `creationDateFrom`) as `YYYY-MM-DD`: the calendar day of `date` in
 * the store's zone. A string already in that shape is passed through; any other string is refused.
 */
export function formatQueryDate(date: Date | string, timeZone: string): string {
  if (typeof date === 'string') {
    if (!QUERY_DATE.test(date) || Number.isNaN(wallTime(...splitQueryDate(date), 0, 0, 0))) {
      throw new ValidationError([{ field: 'date', value: date, rule: 'a date as YYYY-MM-DD' }], 'query date');
    }
    return date;
  }
  if (Number.isNaN(date.getTime())) {
    throw new ValidationError([{ field: 'date', value: String(date), rule: 'a valid date' }], 'query date');
  }
  // The instant moved by the zone's offset reads, in UTC, the zone's wall clock.
  const wall = new Date(date.getTime() + zoneOffsetMs(date.getTime(), timeZone));
  return `${String(wall.getUTCFullYear()).padStart(4, '0')}-${String(wall.getUTCMonth() + 1).padStart(2, '0')}-${String(wall.getUTCDate()).padStart(2, '0')}`;
}

function splitQueryDate(text: string): [number, number, number] {
  const [year, month, day] = text.split('-').map(Number);
  return [year ?? 0, month ?? 0, day ?? 0];
}
