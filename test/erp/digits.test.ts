import { describe, expect, it } from 'vitest';

import { digits } from '../../src/erp/digits.js';

describe('digits', () => {
  it('reads exactly `length` decimal digits from `start`, whatever follows them', () => {
    // Values written out by hand; each field is followed by a character that is no digit.
    const cases: Array<[string, number, number, number]> = [
      ['2024-05-01 10:07:09', 0, 4, 2024],
      ['2024-05-01 10:07:09', 5, 2, 5],
      ['2024-05-01 10:07:09', 8, 2, 1],
      ['2024-05-01 10:07:09', 14, 2, 7],
      ['12:34', 0, 2, 12],
      ['x0099y', 1, 4, 99],
      ['1234', 1, 2, 23],
      ['', 0, 0, 0],
    ];
    for (const [text, start, length, value] of cases) expect(digits(text, start, length), `${text} [${start}, ${start + length})`).toBe(value);
  });

  it('is NaN when a character of the field is not a digit, either side of 0–9 or past the text', () => {
    // '/' (0x2f) sorts just below '0', ':' (0x3a) just above '9'.
    for (const [text, start, length] of [['2/24', 0, 4], ['2:24', 0, 4], ['12 4', 0, 4], ['-5', 0, 2], ['12', 1, 2]] as const) {
      expect(digits(text, start, length), `${text} [${start}, ${start + length})`).toBeNaN();
    }
  });
});
