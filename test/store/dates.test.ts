import { describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/errors.js';
import { formatQueryDate, parseStoreDate } from '../../src/store/dates.js';
import { zoneOffsetMs } from '../../src/time-zone.js';

const BUENOS_AIRES = 'America/Argentina/Buenos_Aires';

describe('parseStoreDate', () => {
  it('reads MM/DD/YYYY HH:MM:SS as wall time of the store zone (UTC-3)', () => {
    expect(parseStoreDate('11/14/2023 19:13:20', BUENOS_AIRES)?.toISOString()).toBe('2023-11-14T22:13:20.000Z');
  });

  it('reads the US shape with single-digit fields and AM/PM', () => {
    expect(parseStoreDate('1/5/2024 9:03:00 PM', BUENOS_AIRES)?.toISOString()).toBe('2024-01-06T00:03:00.000Z');
    expect(parseStoreDate('1/5/2024 12:00:00 AM', BUENOS_AIRES)?.toISOString()).toBe('2024-01-05T03:00:00.000Z');
  });

  it('reads ISO 8601 without a zone as wall time of the store zone', () => {
    expect(parseStoreDate('2024-03-01T10:00:00', BUENOS_AIRES)?.toISOString()).toBe('2024-03-01T13:00:00.000Z');
    expect(parseStoreDate('2024-03-01T10:00:00.1234567', BUENOS_AIRES)?.toISOString()).toBe('2024-03-01T13:00:00.123Z');
  });

  it('keeps the zone of an ISO 8601 value that has one', () => {
    expect(parseStoreDate('2024-03-01T10:00:00Z', BUENOS_AIRES)?.toISOString()).toBe('2024-03-01T10:00:00.000Z');
    expect(parseStoreDate('2024-03-01T10:00:00+02:00', BUENOS_AIRES)?.toISOString()).toBe('2024-03-01T08:00:00.000Z');
  });

  it('reads .NET /Date(ms)/ as an instant, with or without an offset suffix', () => {
    expect(parseStoreDate('/Date(1700000000000)/', BUENOS_AIRES)?.getTime()).toBe(1700000000000);
    expect(parseStoreDate('/Date(1700000000000-0300)/', BUENOS_AIRES)?.getTime()).toBe(1700000000000);
  });

  it('uses the configured zone, including its daylight saving time', () => {
    // New York is UTC-5 in January and UTC-4 in July.
    expect(parseStoreDate('01/15/2024 12:00:00', 'America/New_York')?.toISOString()).toBe('2024-01-15T17:00:00.000Z');
    expect(parseStoreDate('07/15/2024 12:00:00', 'America/New_York')?.toISOString()).toBe('2024-07-15T16:00:00.000Z');
    expect(parseStoreDate('2024-07-15T12:00:00', 'UTC')?.toISOString()).toBe('2024-07-15T12:00:00.000Z');
  });

  it('returns null for an absent value', () => {
    expect(parseStoreDate(null, BUENOS_AIRES)).toBeNull();
    expect(parseStoreDate(undefined, BUENOS_AIRES)).toBeNull();
    expect(parseStoreDate('  ', BUENOS_AIRES)).toBeNull();
  });

  it('throws a ValidationError for text that is not a date or a day the calendar lacks', () => {
    for (const bad of ['yesterday', '02/30/2024 10:00:00', '2024-13-01', '13/40/2024', 12]) {
      expect(() => parseStoreDate(bad, BUENOS_AIRES)).toThrow(ValidationError);
    }
  });
});

describe('zoneOffsetMs', () => {
  it('gives UTC-3 for Buenos Aires from Intl, not a constant', () => {
    expect(zoneOffsetMs(Date.UTC(2024, 0, 1), BUENOS_AIRES)).toBe(-3 * 3600_000);
    expect(zoneOffsetMs(Date.UTC(2024, 0, 1), 'Asia/Kolkata')).toBe(5.5 * 3600_000);
  });
});

describe('formatQueryDate', () => {
  it('writes the calendar day of the instant in the store zone', () => {
    // 01:00 UTC on 2 March is still 1 March in Buenos Aires.
    expect(formatQueryDate(new Date('2024-03-02T01:00:00Z'), BUENOS_AIRES)).toBe('2024-03-01');
    expect(formatQueryDate(new Date('2024-03-02T04:00:00Z'), BUENOS_AIRES)).toBe('2024-03-02');
  });

  it('passes a YYYY-MM-DD string through and refuses other strings', () => {
    expect(formatQueryDate('2024-02-29', BUENOS_AIRES)).toBe('2024-02-29');
    expect(() => formatQueryDate('2023-02-29', BUENOS_AIRES)).toThrow(ValidationError);
    expect(() => formatQueryDate('01/02/2024', BUENOS_AIRES)).toThrow(ValidationError);
    expect(() => formatQueryDate(new Date('nope'), BUENOS_AIRES)).toThrow(ValidationError);
  });
});
