/**
 * Timestamps without a zone (`DATETIME`, `timestamp without time zone`) as the ERP writes them: the wall
 * clock of one time zone (Odoo: UTC; ERPNext: the site's local zone). The SQL client reads them as text
 * and places them with the source's `timeZone` here, never with the process's own zone (`TZ`), which the
 * drivers would otherwise use; and binds Dates back as that zone's wall clock.
 *
 * A wall time a DST fall-back repeats is placed at its earlier instant, and one a spring-forward skips at
 * the transition: so the placing never goes backwards as the wall clock goes forwards, and the cursor
 * order stays the database's order. Rows written in the repeated hour sort, in the database, before rows
 * already read; `backwardShiftNear` tells a poll to widen its start by the shift (see sql-source.ts).
 *
 * Offsets come from Intl (the ICU time zone data Node ships), at a second's precision.
 */
import { isUtcZone, zoneOffsetMs } from '../time-zone.js';
import { digits } from './digits.js';
import { dateOfMicros, epochMicros } from './precise-date.js';

/** The zone's offset from UTC (ms, east positive) at the instant `epochMs`. */
const offsetAt = (zone: string, epochMs: number): number => zoneOffsetMs(epochMs, zone);

/** `YYYY-MM-DD[ T]HH:MM[:SS[.fraction]]`, no zone: how pg and mysql2 give a naive timestamp's text. */
const NAIVE = /^(\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?$/;
/** pg's `timestamptz` text: a naive part and an offset (`+02`, `-03:30`, `+00:00:00`). */
const OFFSET = /^(.*?)([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?$/;

/**
 * Wall-clock microseconds of `text[0, end)` when it is the form the drivers write, `YYYY-MM-DD HH:MM:SS`
 * (or `T`) with an optional fraction and a year of 100 or more, read by hand: the regex and a Date's
 * setters cost several times as much, a million times in a reconcile (issue 27). Undefined for anything
 * else, which `wallMicros`'s regex then reads (Date.UTC would read years 0–99 as 1900–1999).
 */
function commonWallMicros(text: string, end: number): number | undefined {
  if (end < 19 || text[4] !== '-' || text[7] !== '-' || (text[10] !== ' ' && text[10] !== 'T') || text[13] !== ':' || text[16] !== ':') return undefined;
  const year = digits(text, 0, 4);
  const ms = Date.UTC(year, digits(text, 5, 2) - 1, digits(text, 8, 2), digits(text, 11, 2), digits(text, 14, 2), digits(text, 17, 2));
  if (!(year >= 100) || Number.isNaN(ms)) return undefined;
  if (end === 19) return ms * 1000;
  if (text[19] !== '.' || end === 20) return undefined;
  // Digits past the microsecond are dropped: a cursor never rounds up.
  let micros = 0;
  for (let i = 20; i < end; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    if (i < 26) micros = micros * 10 + digit;
  }
  return ms * 1000 + micros * 10 ** Math.max(0, 26 - end);
}

/** Wall-clock microseconds (as if the wall clock were UTC) of naive text, or undefined if it is not one. */
function wallMicros(text: string): number | undefined {
  const trimmed = text.trim();
  const common = commonWallMicros(trimmed, trimmed.length);
  if (common !== undefined) return common;
  const match = NAIVE.exec(trimmed);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction] = match;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s ?? 0), 0);
  const ms = date.getTime();
  if (Number.isNaN(ms)) return undefined;
  // Digits past the microsecond are dropped: a cursor never rounds up.
  return ms * 1000 + Number((fraction ?? '').padEnd(6, '0').slice(0, 6));
}

/**
 * The instant of a naive wall time in `zone`: a repeated wall time (DST fall-back) at its earlier
 * instant, a skipped one (spring-forward) at the transition. Undefined for text that is not a naive
 * timestamp.
 */
export function naiveToDate(text: string, zone: string): Date | undefined {
  const wall = wallMicros(text);
  if (wall === undefined) return undefined;
  return dateOfMicros(wallToEpochMicros(wall, zone));
}

/** Epoch microseconds of wall-clock microseconds in `zone`; see `naiveToDate`. */
function wallToEpochMicros(wall: number, zone: string): number {
  if (isUtcZone(zone)) return wall;
  const wallMs = Math.floor(wall / 1000);
  const day = 86_400_000;
  // The offsets in force a day either side cover any transition near this wall time.
  const offsets = new Set([offsetAt(zone, wallMs - day), offsetAt(zone, wallMs), offsetAt(zone, wallMs + day)]);
  const valid = [...offsets].map((offset) => wallMs - offset).filter((instant) => wallMs - offsetAt(zone, instant) === instant);
  if (valid.length > 0) return Math.min(...valid) * 1000 + (wall - wallMs * 1000);
  // Skipped by a spring-forward: the transition, the first instant whose wall clock is later.
  let low = wallMs - Math.max(...offsets);
  let high = wallMs - Math.min(...offsets);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (middle + offsetAt(zone, middle) > wallMs) high = middle;
    else low = middle;
  }
  return high * 1000;
}

/** pg's `timestamptz` text as a Date with its microseconds; undefined for other text (`infinity`, BC dates). */
export function offsetTextToDate(text: string): Date | undefined {
  const trimmed = text.trim();
  const common = commonOffsetMicros(trimmed);
  if (common !== undefined) return dateOfMicros(common);
  const match = OFFSET.exec(trimmed);
  if (!match) return undefined;
  const [, naive, sign, hours, minutes, seconds] = match;
  const wall = wallMicros(naive ?? '');
  if (wall === undefined) return undefined;
  const offset = (Number(hours) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds ?? 0)) * 1_000_000;
  return dateOfMicros(sign === '-' ? wall + offset : wall - offset);
}

/**
 * Epoch microseconds of pg's usual `timestamptz` text, a common naive part (`commonWallMicros`) and an
 * offset `+HH`, `+HH:MM` or `+HH:MM:SS`, read by hand; undefined for anything else (`OFFSET` reads it).
 */
function commonOffsetMicros(text: string): number | undefined {
  let sign = 19;
  if (text[sign] === '.') for (sign = 20; sign < text.length && text.charCodeAt(sign) >= 0x30 && text.charCodeAt(sign) <= 0x39; sign++);
  const east = text[sign] === '+';
  if (!east && text[sign] !== '-') return undefined;
  const zone = text.length - sign - 1;
  if (zone !== 2 && !(zone === 5 && text[sign + 3] === ':') && !(zone === 8 && text[sign + 3] === ':' && text[sign + 6] === ':')) return undefined;
  const offset = digits(text, sign + 1, 2) * 3600 + (zone > 2 ? digits(text, sign + 4, 2) * 60 : 0) + (zone > 5 ? digits(text, sign + 7, 2) : 0);
  const wall = commonWallMicros(text, sign);
  if (wall === undefined || Number.isNaN(offset)) return undefined;
  return east ? wall - offset * 1_000_000 : wall + offset * 1_000_000;
}

/** The wall clock of `date` in `zone`: `YYYY-MM-DD HH:MM:SS.ffffff` (what a naive column holds). */
export function wallText(date: Date, zone: string): string {
  const micros = epochMicros(date);
  const ms = Math.floor(micros / 1000);
  const wall = new Date(ms + offsetAt(zone, ms));
  const iso = wall.toISOString();
  // toISOString writes years past 9999 and before 0 with a sign; ERPs do not.
  const body = iso.slice(iso.length - 24, -1).replace('T', ' ');
  return `${body}${String(micros - ms * 1000).padStart(3, '0')}`;
}

/** `wallText` with the zone's offset (`+02:00`): a `timestamptz` reads the instant, a naive `timestamp` the wall clock. */
export function zonedText(date: Date, zone: string): string {
  const offset = offsetAt(zone, date.getTime()) / 60_000;
  const abs = Math.abs(offset);
  const sign = offset < 0 ? '-' : '+';
  return `${wallText(date, zone)}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * How far back (ms) `zone`'s wall clock jumps at a transition within `withinMs` after `date` (a DST
 * fall-back: 3_600_000), or 0. A poll whose start lies just before such a transition must read from its
 * start's wall clock moved back by this much, or rows written in the repeated hour (which the database
 * sorts before the rows already read) would never be read.
 */
export function backwardShiftNear(date: Date, zone: string, withinMs: number): number {
  if (isUtcZone(zone)) return 0;
  const shift = offsetAt(zone, date.getTime()) - offsetAt(zone, date.getTime() + withinMs);
  return shift > 0 ? shift : 0;
}
