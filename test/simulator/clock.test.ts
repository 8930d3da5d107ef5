import { describe, expect, it } from 'vitest';

import { formatLocalIso, formatStoreDate, nextDay, parseQueryDate, parseStoreDate } from '../../src/simulator/clock.js';

const BA = 'America/Argentina/Buenos_Aires';

describe('simulator clock', () => {
  it('formats an instant as MM/DD/YYYY HH:MM:SS on the Buenos Aires wall clock (UTC-3)', () => {
    expect(formatStoreDate(Date.UTC(2024, 0, 2, 2, 5, 9), BA)).toBe('01/01/2024 23:05:09');
  });

  it('formats an instant as ISO 8601 without a zone', () => {
    expect(formatLocalIso(Date.UTC(2024, 6, 9, 15, 0, 0), BA)).toBe('2024-07-09T12:00:00');
  });

  it('reads a query date as the start of that day in the store zone', () => {
    expect(parseQueryDate('2024-03-10', BA)).toBe(Date.UTC(2024, 2, 10, 3));
    expect(nextDay(Date.UTC(2024, 2, 10, 3), BA)).toBe(Date.UTC(2024, 2, 11, 3));
  });

  it('rejects malformed and impossible dates', () => {
    expect(parseQueryDate('2024-02-30', BA)).toBeUndefined();
    expect(parseQueryDate('10/03/2024', BA)).toBeUndefined();
    expect(parseStoreDate('13/01/2024 00:00:00', BA)).toBeUndefined();
  });

  it('reads back what it writes, in a zone with daylight saving time too', () => {
    for (const zone of [BA, 'Europe/Madrid']) {
      const ms = Date.UTC(2024, 2, 31, 1, 30, 0);
      expect(parseStoreDate(formatStoreDate(ms, zone), zone)).toBe(ms);
    }
  });
});

describe('simulator clock against Intl', () => {
  it('agrees with Intl for instants all over a year with two DST changes', () => {
    const intl = new Intl.DateTimeFormat('en-US', {
      timeZone: 'Europe/Madrid', hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    const start = Date.UTC(2024, 0, 1);
    for (let i = 0; i < 2000; i += 1) {
      const ms = start + Math.floor((i * 366 * 86_400_000) / 2000) + i * 7919;
      const p = Object.fromEntries(intl.formatToParts(ms).map((x) => [x.type, x.value]));
      expect(formatStoreDate(ms, 'Europe/Madrid')).toBe(`${p.month}/${p.day}/${p.year} ${p.hour}:${p.minute}:${p.second}`);
    }
  });
});
