/** Fixed-width decimal fields read by hand, where a regex and `Number` per field would cost several times as much per row. */

/** The number written at `text[start, start + length)` in decimal digits, or NaN. */
export function digits(text: string, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}
