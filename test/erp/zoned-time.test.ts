import { afterEach, describe, expect, it } from 'vitest';

import { sqlSourceSchema } from '../../src/config/schema.js';
import { compareCursors, cursorToVersion, pollStart, toCursor } from '../../src/erp/cursor.js';
import { epochMicros, PreciseDate } from '../../src/erp/precise-date.js';
import { openSql } from '../../src/erp/sql-client.js';
import { backwardShiftNear, naiveToDate, offsetTextToDate, wallText, zonedText } from '../../src/erp/zoned-time.js';

// An Invalid Date is told as such (toISOString would throw), so that a wrong reading fails an assertion.
function iso(date: Date | undefined): string | undefined {
  if (date === undefined) return undefined;
  return Number.isNaN(date.getTime()) ? 'Invalid Date' : date.toISOString();
}
/** Epoch microseconds, or undefined: a wrong reading fails an assertion, not a TypeError. */
const microsOf = (date: Date | undefined): number | undefined => (date === undefined ? undefined : epochMicros(date));
const originalTz = process.env.TZ;

afterEach(() => {
  // Node re-reads TZ when it is assigned; restore what the file started with.
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

describe('naiveToDate', () => {
  it('places a naive wall time in the given zone, keeping its microseconds', () => {
    expect(iso(naiveToDate('2024-05-01 12:00:00.123456', 'Europe/Madrid'))).toBe('2024-05-01T10:00:00.123456Z');
    expect(iso(naiveToDate('2024-05-01 10:00:00.123456', 'UTC'))).toBe('2024-05-01T10:00:00.123456Z');
    expect(iso(naiveToDate('2024-05-01 10:00:00', 'UTC'))).toBe('2024-05-01T10:00:00.000Z');
  });

  it('drops digits past the microsecond instead of rounding up', () => {
    expect(iso(naiveToDate('2024-05-01 10:00:00.999999999', 'UTC'))).toBe('2024-05-01T10:00:00.999999Z');
  });

  it('gives the same instants whatever the process TZ is (TZ=Asia/Tokyo)', () => {
    process.env.TZ = 'Asia/Tokyo';
    expect(new Date(2024, 0, 1).getTimezoneOffset()).toBe(-540);
    expect(iso(naiveToDate('2024-05-01 10:00:00.123456', 'UTC'))).toBe('2024-05-01T10:00:00.123456Z');
    expect(iso(naiveToDate('2024-05-01 12:00:00', 'Europe/Madrid'))).toBe('2024-05-01T10:00:00.000Z');
    expect(wallText(new Date('2024-05-01T10:00:00Z'), 'UTC')).toBe('2024-05-01 10:00:00.000000');
  });

  it('places a wall time a DST fall-back repeats at its earlier instant, and one the spring-forward skips at the transition', () => {
    // Europe/Madrid, 2024-10-27: 03:00 CEST becomes 02:00 CET; 2024-03-31: 02:00 CET becomes 03:00 CEST.
    expect(iso(naiveToDate('2024-10-27 02:30:00', 'Europe/Madrid'))).toBe('2024-10-27T00:30:00.000Z');
    expect(iso(naiveToDate('2024-10-27 03:00:00', 'Europe/Madrid'))).toBe('2024-10-27T02:00:00.000Z');
    expect(iso(naiveToDate('2024-03-31 02:30:00', 'Europe/Madrid'))).toBe('2024-03-31T01:00:00.000Z');
  });

  it('never goes backwards as the wall clock goes forwards across both transitions', () => {
    for (const day of ['2024-10-27', '2024-03-31']) {
      let previous = Number.NEGATIVE_INFINITY;
      for (let minute = 0; minute < 300; minute += 5) {
        const wall = `${day} ${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}:00`;
        const at = naiveToDate(wall, 'Europe/Madrid')?.getTime() ?? Number.NaN;
        expect(at).toBeGreaterThanOrEqual(previous);
        previous = at;
      }
    }
  });

  it.each([
    ['2026-11-27T17:49:05.5', '2026-11-27T17:49:05.500Z'],
    ['2026-11-27 17:49:05', '2026-11-27T17:49:05.000Z'],
    [' 2026-11-27 17:49:05.123456 ', '2026-11-27T17:49:05.123456Z'],
    ['0099-12-31 23:59:59', '0099-12-31T23:59:59.000Z'],
    ['2026-11-27 17:49', '2026-11-27T17:49:00.000Z'],
  ])('reads %j in UTC as %s', (text, expected) => {
    expect(iso(naiveToDate(text, 'UTC'))).toBe(expected);
  });

  it('is undefined for text that is not a naive timestamp', () => {
    expect(naiveToDate('yesterday', 'UTC')).toBeUndefined();
    expect(naiveToDate('2024-05-01T10:00:00Z', 'UTC')).toBeUndefined();
  });

  // Each length of a fraction, hand-scaled to microseconds: digits past the sixth are dropped, never rounded up.
  it.each([
    ['7', '.700000'],
    ['07', '.070000'],
    ['007', '.007000'],
    ['0007', '.000700'],
    ['00007', '.000070'],
    ['000007', '.000007'],
    ['0000079', '.000007'],
    ['00000799', '.000007'],
    ['999999999', '.999999'],
  ])('reads the fraction .%s as %s of a second, naive or with an offset', (fraction, micros) => {
    const expected = Date.UTC(2024, 4, 1, 10) * 1000 + Number(micros.slice(1));
    expect(microsOf(naiveToDate(`2024-05-01 10:00:00.${fraction}`, 'UTC'))).toBe(expected);
    expect(microsOf(offsetTextToDate(`2024-05-01 12:00:00.${fraction}+02`))).toBe(expected);
  });

  it('reads a short fraction between spaces as without them', () => {
    expect(iso(naiveToDate(' 2026-11-27 17:49:05.5 ', 'UTC'))).toBe('2026-11-27T17:49:05.500Z');
    expect(iso(naiveToDate('\t2026-11-27 17:49:05.12\n', 'UTC'))).toBe('2026-11-27T17:49:05.120Z');
  });

  it('rolls an invalid day over as the regex and Date setters before it did (2024-02-30 is 2024-03-01)', () => {
    expect(iso(naiveToDate('2024-02-30 12:00:00', 'UTC'))).toBe('2024-03-01T12:00:00.000Z');
    expect(iso(offsetTextToDate('2024-02-30 12:00:00+02'))).toBe('2024-03-01T10:00:00.000Z');
  });

  // Every separator in its place, and digits (not a space, sign or dot, which sort below "0") in every field.
  it.each([
    '2024-05-01 12:00x00',
    '2024-05-01 12x00:00',
    '2024-05-01x12:00:00',
    '2024x05-01 12:00:00',
    '2024-05x01 12:00:00',
    '2024-05-01 1 :00:00',
    '2024-05-01 12:00:0-',
    '2024-0 -01 12:00:00',
    '2024-05-01 12:00:00.5+02',
    '2024-05-01 12:00:00.5-02',
    '2024-05-01 12:00:00.12 34',
  ])('is undefined for %j, as naive text or before an offset', (text) => {
    expect(naiveToDate(text, 'UTC')).toBeUndefined();
    if (!/[+-]\d\d$/.test(text)) expect(offsetTextToDate(`${text}+02`)).toBeUndefined();
  });
});

describe('offsetTextToDate (pg timestamptz text)', () => {
  it('reads the offsets pg writes, with microseconds', () => {
    expect(iso(offsetTextToDate('2024-05-01 12:00:00.123456+02'))).toBe('2024-05-01T10:00:00.123456Z');
    expect(iso(offsetTextToDate('2024-05-01 06:30:00-03:30'))).toBe('2024-05-01T10:00:00.000Z');
    expect(offsetTextToDate('infinity')).toBeUndefined();
  });

  // The usual forms are read by hand (commonOffsetMicros), the rest by the regex: both must agree with these.
  it.each([
    ['2026-11-27 17:49:05.510+00', '2026-11-27T17:49:05.510Z'],
    ['2026-11-27T17:49:05+00', '2026-11-27T17:49:05.000Z'],
    ['2026-11-27 17:49:05.5+00', '2026-11-27T17:49:05.500Z'],
    ['2026-11-27 17:49:05.000001+00', '2026-11-27T17:49:05.000001Z'],
    ['2026-11-27 17:49:05.123456789-03:30', '2026-11-27T21:19:05.123456Z'],
    ['2026-11-27 01:00:00+05:30:15', '2026-11-26T19:29:45.000Z'],
    ['2026-11-27 01:00:00-00:00:15', '2026-11-27T01:00:15.000Z'],
    [' 2026-11-27 17:49:05.510+00\n', '2026-11-27T17:49:05.510Z'],
    ['0099-01-01 00:00:00+00', '0099-01-01T00:00:00.000Z'],
    ['2024-05-01 12:00:00+0530', '2024-05-01T06:30:00.000Z'],
    ['2024-05-01 12:00+02', '2024-05-01T10:00:00.000Z'],
    ['12024-05-01 12:00:00+02', '+012024-05-01T10:00:00.000Z'],
  ])('reads %j as %s', (text, expected) => {
    expect(iso(offsetTextToDate(text))).toBe(expected);
  });

  it.each(['2024-05-01 12:00:00.+02', '2024-05-01 12:00:00.12a+02', '2024-05-01 12:0a:00+02', '2024-05-01 12:00:00+2', '2024-05-01 12:00:00+02:3', '2024-05-01 12:00:00+05330', '2024-05-01 12:00:00', '2024/05/01 12:00:00+02', '2024-05-01 12:00:00+0a', '2024-05-01 12:00:00+02:3a', '2024-05-01 12:00:00+02:30:1a', '2024-05-01 12:00:00+0 :00', '2024-05-01 12:00:00+05:30x15', '2024-05-01 12:00:00+05x30:15'])(
    'is undefined for %j',
    (text) => {
      expect(offsetTextToDate(text)).toBeUndefined();
    },
  );
});

describe('wallText and zonedText', () => {
  it('write a Date as the zone wall clock with microseconds, and its offset', () => {
    const at = new PreciseDate(Date.UTC(2024, 4, 1, 10, 0, 0, 123) * 1000 + 456);
    expect(wallText(at, 'Europe/Madrid')).toBe('2024-05-01 12:00:00.123456');
    expect(zonedText(at, 'Europe/Madrid')).toBe('2024-05-01 12:00:00.123456+02:00');
    expect(zonedText(at, 'America/St_Johns')).toBe('2024-05-01 07:30:00.123456-02:30');
  });

  it('round-trips a repeated wall time through its earlier instant', () => {
    const at = naiveToDate('2024-10-27 02:30:00.000001', 'Europe/Madrid') as Date;
    expect(wallText(at, 'Europe/Madrid')).toBe('2024-10-27 02:30:00.000001');
  });
});

describe('backwardShiftNear', () => {
  it('is the shift of a fall-back within the horizon, else 0', () => {
    const twoHours = 2 * 3_600_000;
    expect(backwardShiftNear(new Date('2024-10-27T00:30:00Z'), 'Europe/Madrid', twoHours)).toBe(3_600_000);
    expect(backwardShiftNear(new Date('2024-10-26T20:00:00Z'), 'Europe/Madrid', twoHours)).toBe(0);
    expect(backwardShiftNear(new Date('2024-03-31T00:30:00Z'), 'Europe/Madrid', twoHours)).toBe(0);
    expect(backwardShiftNear(new Date('2024-10-27T00:30:00Z'), 'UTC', twoHours)).toBe(0);
  });
});

describe('microsecond cursors', () => {
  it('keep their microseconds, order by them, and compare with millisecond cursors stored before', () => {
    const micro = toCursor(new PreciseDate(Date.UTC(2024, 4, 1, 10) * 1000 + 1));
    expect(micro).toBe('2024-05-01T10:00:00.000001Z');
    expect(toCursor('2024-05-01T12:00:00.123456789+02:00')).toBe('2024-05-01T10:00:00.123456Z');
    expect(compareCursors('2024-05-01T10:00:00.000Z', micro)).toBeLessThan(0);
    expect(compareCursors('2024-05-01T10:00:00.001Z', micro)).toBeGreaterThan(0);
    expect(compareCursors('2024-05-01T10:00:00.000002Z', micro)).toBeGreaterThan(0);
    expect(cursorToVersion(micro)).toBe(Date.UTC(2024, 4, 1, 10));
  });

  it('start a poll at their exact microsecond, never later', () => {
    const start = pollStart('2024-05-01T10:00:00.123456Z', 0);
    expect(start).toBeInstanceOf(PreciseDate);
    expect(start instanceof Date ? start.toISOString() : start).toBe('2024-05-01T10:00:00.123456Z');
    const overlapped = pollStart('2024-05-01T10:01:00.123456Z', 60_000);
    expect(overlapped instanceof Date ? overlapped.toISOString() : overlapped).toBe('2024-05-01T10:00:00.123456Z');
  });
});

describe('timeZone in the configuration', () => {
  it('accepts IANA names and refuses a mistyped zone, naming the rule', () => {
    const base = { name: 'erp', kind: 'sql', schedule: '* * * * * *', url: 'mysql://root@127.0.0.1/test', changes: 'SELECT 1' };
    expect(sqlSourceSchema.parse({ ...base, timeZone: 'Europe/Madrid' }).timeZone).toBe('Europe/Madrid');
    const refused = sqlSourceSchema.safeParse({ ...base, timeZone: 'Europe/Madird' });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]).toMatchObject({ path: ['timeZone'], message: 'an IANA time zone such as "Europe/Madrid", or "UTC"' });
    expect(() => openSql('mysql://root@127.0.0.1/test', { timeZone: 'Mars/Olympus' })).toThrow('openSql: unknown time zone "Mars/Olympus"');
  });
});
