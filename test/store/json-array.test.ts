import { describe, expect, it, vi } from 'vitest';

import { JsonArrayReader } from '../../src/store/json-array.js';

/** Reads `text` cut into chunks of `size` bytes; returns the elements and whether the array ended. */
function read(text: string, size = Infinity): { elements: unknown[]; ended: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  const elements: unknown[] = [];
  const reader = new JsonArrayReader((element) => void elements.push(element));
  const step = Math.min(size, Math.max(bytes.length, 1));
  for (let i = 0; i < bytes.length; i += step) reader.write(bytes.subarray(i, i + step));
  return { elements, ended: reader.isEnded };
}

// Strings with what a scanner of brackets can trip on: brackets, commas, escaped quotes and backslashes, multibyte text.
const tricky = [
  { Code: 'A-1', Name: 'brackets ]}[{ and, commas', Stock: 3, Price: 10.5 },
  { Code: 'A-2', Name: 'quote \\" and backslash \\\\', Properties: [{ Key: 'k', Value: 'v\\' }, { Key: '"', Value: null }] },
  { Code: 'Ñandú "2" € 🦙', Nested: { deep: [[[], {}], [1, [2, [3]]]] }, Flag: true, Nothing: null },
  'a string element with \\u00e9 and "quotes"',
  -12.5e3,
  0,
  true,
  null,
  [],
  {},
];

describe('JsonArrayReader', () => {
  it('hands over every element as JSON.parse reads it, wherever the chunks are cut', () => {
    const text = ` \n[ ${tricky.map((value) => JSON.stringify(value)).join(' ,\n')} ]\r\n`;
    const expected = JSON.parse(text) as unknown[];
    for (const size of [1, 2, 3, 5, 7, 16, 64, Infinity]) {
      expect(read(text, size)).toEqual({ elements: expected, ended: true });
    }
  });

  it('reads an empty array and top-level numbers and literals next to the brackets', () => {
    expect(read('[]')).toEqual({ elements: [], ended: true });
    expect(read('[1,2.5,true,null,"x"]', 1)).toEqual({ elements: [1, 2.5, true, null, 'x'], ended: true });
  });

  it('is not ended while the array is cut short, inside an element or between two', () => {
    expect(read('[{"Code":"A"},{"Code":"B","Name":"x\\').ended).toBe(false);
    expect(read('[{"Code":"A"},').ended).toBe(false);
    expect(read('[1').ended).toBe(false);
  });

  it('refuses what is not one JSON array: a missing or extra comma, a broken element, text after the end', () => {
    for (const text of ['[1 2]', '[1,]', '[,1]', '[{"a":1}}]', '[{"a":1]', '[{"a" 1}]', '[1]x', '[1,[2}]', '{"a":1}', '[tru]']) {
      expect(() => read(text), text).toThrow(SyntaxError);
    }
  });

  it('parses the complete elements of one chunk with one JSON.parse (a run of three, of two), an element split across chunks alone', () => {
    const seen: unknown[] = [];
    const reader = new JsonArrayReader((element) => void seen.push(element));
    // Counted, not timed: a run that fell back to a parse per element would hand over the same elements (issue 27's CPU).
    const parse = vi.spyOn(JSON, 'parse');
    const calls: number[] = [];
    try {
      reader.write(Buffer.from('[{"a":1}, "x,]" ,[2,[3]],{"b"'));
      calls.push(parse.mock.calls.length);
      reader.write(Buffer.from(':4}, 5 ,\n6]'));
      calls.push(parse.mock.calls.length - calls[0]!);
    } finally {
      parse.mockRestore();
    }
    expect(calls).toEqual([1, 2]);
    expect(seen).toEqual([{ a: 1 }, 'x,]', [2, [3]], { b: 4 }, 5, 6]);
    expect(reader.isEnded).toBe(true);
  });

  it('hands over the elements before a broken one of the same chunk, then refuses the body with that element\'s error', () => {
    const seen: unknown[] = [];
    const reader = new JsonArrayReader((element) => void seen.push(element));
    expect(() => reader.write(Buffer.from('[1,{"a":2},{"b" 3},4]'))).toThrow(SyntaxError);
    expect(seen).toEqual([1, { a: 2 }]);
  });

  it.each([
    ['[{"b" 3},1,2]', []],
    ['[1,2,{"b" 3}]', [1, 2]],
    ['[1,2,tru]', [1, 2]],
    ['[{"b" 3}]', []],
  ])('hands over what precedes the broken element of %j (first, last, alone) and refuses it', (text, before) => {
    const seen: unknown[] = [];
    const reader = new JsonArrayReader((element) => void seen.push(element));
    expect(() => reader.write(Buffer.from(text))).toThrow(SyntaxError);
    expect(seen).toEqual(before);
  });

  it('hands over the elements before an unexpected byte of the same chunk, then names the byte', () => {
    const seen: unknown[] = [];
    const reader = new JsonArrayReader((element) => void seen.push(element));
    expect(() => reader.write(Buffer.from('[1,"x" 3]'))).toThrow('unexpected "3" at byte 7');
    expect(seen).toEqual([1, 'x']);
  });

  it('lets an error of the visitor through and reads no further', () => {
    const seen: unknown[] = [];
    const reader = new JsonArrayReader((element) => {
      seen.push(element);
      throw new Error('stop');
    });
    expect(() => reader.write(Buffer.from('[1,2,3]'))).toThrow('stop');
    expect(seen).toEqual([1]);
  });
});
