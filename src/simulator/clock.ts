/**
 * Dates as the store writes them: wall-clock time in the store's time zone, without a zone marker.
 * Computed with Intl so any IANA zone works; the simulator's own code, independent of the client's parser.
 */

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

function wallTimeIntl(ms: number, timeZone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(ms)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year ?? 0,
    month: parts.month ?? 0,
    day: parts.day ?? 0,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

const DAY_MS = 86_400_000;

function offsetAt(ms: number, timeZone: string): number {
  const w = wallTimeIntl(ms, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
}

/**
 * Zone offsets per UTC day (null on a day the offset changes): Intl is slow, and listing 100k products
 * formats 100k dates.
 */
const dayOffsets = new Map<string, Map<number, number | null>>();

function zoneOffset(ms: number, timeZone: string): number {
  let days = dayOffsets.get(timeZone);
  if (!days) {
    days = new Map();
    dayOffsets.set(timeZone, days);
  }
  const day = Math.floor(ms / DAY_MS);
  let offset = days.get(day);
  if (offset === undefined) {
    const start = offsetAt(day * DAY_MS, timeZone);
    offset = start === offsetAt(day * DAY_MS + DAY_MS - 1000, timeZone) ? start : null;
    days.set(day, offset);
  }
  return offset ?? offsetAt(ms, timeZone);
}

function wallTime(ms: number, timeZone: string): WallTime {
  const d = new Date(ms + zoneOffset(ms, timeZone));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `MM/DD/YYYY HH:MM:SS` in `timeZone`: the spec's sample format for sale dates. */
export function formatStoreDate(ms: number, timeZone: string): string {
  const w = wallTime(ms, timeZone);
  return `${pad(w.month)}/${pad(w.day)}/${w.year} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
}

/** ISO 8601 without a zone (`2024-05-01T10:20:30`) in `timeZone`: the spec's format for user dates. */
export function formatLocalIso(ms: number, timeZone: string): string {
  const w = wallTime(ms, timeZone);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
}

/** The instant at which the wall clock in `timeZone` shows `w`. */
function fromWallTime(w: WallTime, timeZone: string): number {
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  // Two passes settle the offset even next to a DST change.
  let ms = asUtc;
  for (let i = 0; i < 2; i += 1) {
    const seen = wallTime(ms, timeZone);
    const seenUtc = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, seen.minute, seen.second);
    ms += asUtc - seenUtc;
  }
  return ms;
}

function validWallTime(w: WallTime): boolean {
  const probe = new Date(Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second));
  return probe.getUTCFullYear() === w.year && probe.getUTCMonth() === w.month - 1 && probe.getUTCDate() === w.day && w.hour < 24 && w.minute < 60 && w.second < 60;
}

/** Start of the day `YYYY-MM-DD` in `timeZone`, or undefined when the text is not such a date. */
export function parseQueryDate(text: string, timeZone: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const w = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]), hour: 0, minute: 0, second: 0 };
  return validWallTime(w) ? fromWallTime(w, timeZone) : undefined;
}

/** Parses `MM/DD/YYYY HH:MM:SS` in `timeZone` (the format this simulator writes), or undefined. */
export function parseStoreDate(text: string, timeZone: string): number | undefined {
  const m = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
  if (!m) return undefined;
  const w = {
    year: Number(m[3]),
    month: Number(m[1]),
    day: Number(m[2]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: Number(m[6]),
  };
  return validWallTime(w) ? fromWallTime(w, timeZone) : undefined;
}

/** Adds whole days in `timeZone` to a day start (used for inclusive `to` dates). */
export function nextDay(dayStart: number, timeZone: string): number {
  const w = wallTime(dayStart, timeZone);
  return fromWallTime({ ...w, day: w.day + 1, hour: 0, minute: 0, second: 0 }, timeZone);
}
