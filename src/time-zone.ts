/**
 * Time zone offsets from Intl (the ICU data Node ships), shared by everything that turns a wall clock
 * into an instant: the store's zone-less dates (`src/store/dates.ts`) and the ERP's naive timestamps
 * (`src/erp/zoned-time.ts`). Offsets are exact to the second; formatters are cached per zone.
 */

/** Zones with no offset ever: no Intl call. */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Z']);

/** True for a zone whose wall clock is always UTC's. */
export function isUtcZone(zone: string): boolean {
  return UTC_ZONES.has(zone);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(zone, format);
  }
  return format;
}

/** True when Intl knows `zone` (an IANA name such as `Europe/Madrid`, or `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The zone's offset from UTC (ms, east positive: UTC-3 → -10800000) at the instant `epochMs`. */
export function zoneOffsetMs(epochMs: number, zone: string): number {
  if (UTC_ZONES.has(zone)) return 0;
  const whole = Math.floor(epochMs / 1000) * 1000;
  const parts: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(new Date(whole))) parts[part.type] = part.value;
  const year = Number(parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : parts.year);
  const wall = Date.UTC(year, Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  // Date.UTC maps years 0–99 to 1900–1999.
  const fixed = year >= 0 && year < 100 ? new Date(wall).setUTCFullYear(year) : wall;
  return fixed - whole;
}
