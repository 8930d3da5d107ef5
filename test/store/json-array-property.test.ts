import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { JsonArrayReader } from '../../src/store/json-array.js';

describe('JsonArrayReader (property)', () => {
  it('reads any JSON array exactly as JSON.parse does, wherever the chunks are cut', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom('', ' ', '\n\t '), (values, cuts, space) => {
        const text = `${space}[${space}${values.map((value) => JSON.stringify(value)).join(`${space},${space}`)}${space}]${space}`;
        const bytes = Buffer.from(text, 'utf8');
        const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
        const elements: unknown[] = [];
        const reader = new JsonArrayReader((element) => void elements.push(element));
        let from = 0;
        for (const point of [...points, bytes.length]) {
          reader.write(bytes.subarray(from, point));
          from = point;
        }
        expect(reader.isEnded).toBe(true);
        expect(elements).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });
});
