import { describe, expect, it } from 'vitest';

import { compareCursors, cursorToVersion, isTimestampCursor, maxCursor, pollStart, toCursor } from '../../src/erp/cursor.js';

describe('toCursor', () => {
  it('turns a driver Date into an ISO string in UTC with millisecond precision', () => {
    expect(toCursor(new Date(Date.UTC(2024, 4, 1, 12, 30, 0, 5)))).toBe('2024-05-01T12:30:00.005Z');
  });

  it('turns integer text (pg bigint) into a number and keeps other text', () => {
    expect(toCursor('12345678901')).toBe(12345678901);
    expect(toCursor(42n)).toBe(42);
    expect(toCursor('A-17')).toBe('A-17');
  });

  it('normalises timestamp text with a zone to UTC and leaves zone-less text alone', () => {
    expect(toCursor('2024-05-01T09:30:00-03:00')).toBe('2024-05-01T12:30:00.000Z');
    expect(toCursor('2024-05-01 09:30:00')).toBe('2024-05-01 09:30:00');
  });

  it('yields null for null, blank text and invalid dates', () => {
    expect(toCursor(null)).toBeNull();
    expect(toCursor('  ')).toBeNull();
    expect(toCursor(new Date(Number.NaN))).toBeNull();
  });
});

describe('compareCursors', () => {
  it('orders numbers numerically, also when they arrive as text', () => {
    expect(compareCursors(9, 10)).toBeLessThan(0);
    expect(compareCursors('9', 10)).toBeLessThan(0);
    expect(compareCursors(10, 10)).toBe(0);
  });

  it('orders timestamps by instant whatever their zone', () => {
    expect(compareCursors('2024-05-01T12:00:00.000Z', '2024-05-01T10:00:00-03:00')).toBeLessThan(0);
    expect(compareCursors('2024-05-01T13:00:00.000Z', '2024-05-01T10:00:00-03:00')).toBe(0);
  });

  it('orders other strings lexicographically and null before everything', () => {
    expect(compareCursors('B-1', 'A-9')).toBeGreaterThan(0);
    expect(compareCursors(null, 0)).toBeLessThan(0);
    expect(compareCursors(null, null)).toBe(0);
    expect(maxCursor(null, 'A')).toBe('A');
  });
});

describe('cursorToVersion', () => {
  it('gives epoch ms for timestamps and the number itself for numbers', () => {
    expect(cursorToVersion('2024-05-01T12:00:00.000Z')).toBe(Date.UTC(2024, 4, 1, 12));
    expect(cursorToVersion(77)).toBe(77);
    expect(cursorToVersion('77')).toBe(77);
  });

  it('gives null for null and for strings without a numeric meaning', () => {
    expect(cursorToVersion(null)).toBeNull();
    expect(cursorToVersion('A-17')).toBeNull();
  });
});

describe('pollStart', () => {
  it('moves a timestamp cursor back by the overlap and leaves numbers alone', () => {
    expect(pollStart('2024-05-01T12:01:00.000Z', 60_000)).toEqual(new Date('2024-05-01T12:00:00.000Z'));
    expect(pollStart(500, 60_000)).toBe(500);
    expect(pollStart(null, 60_000)).toBeNull();
    expect(isTimestampCursor('2024-05-01T12:01:00.000Z')).toBe(true);
  });

  it('narrows the overlap to the last poll\'s start less the overlap, never before cursor − overlap nor after the cursor', () => {
    const cursor = '2024-05-01T12:01:00.000Z';
    const at = (iso: string): number => Date.parse(iso);
    // Hand-computed with an overlap of 60 s: the window starts at previousPollAt − 60 s, within [cursor − 60 s, cursor].
    expect(pollStart(cursor, 60_000, at('2024-05-01T12:01:30.000Z'))).toEqual(new Date('2024-05-01T12:00:30.000Z'));
    expect(pollStart(cursor, 60_000, at('2024-05-01T12:00:10.000Z')), 'never before cursor − overlap').toEqual(new Date('2024-05-01T12:00:00.000Z'));
    // The last poll began long after the cursor (a quiet source), but did not end caught up there: start at the cursor, not past it.
    expect(pollStart(cursor, 60_000, at('2024-05-01T12:03:00.000Z')), 'a poll started past its stored cursor').toEqual(new Date('2024-05-01T12:01:00.000Z'));
  });
});
