/**
 * A JSON array read as it streams in, element by element. A scanner that follows only strings and
 * brackets finds where each top-level element ends, and `JSON.parse` (native, several times faster than
 * a tokenizer written in JavaScript) reads that element alone. Only the element in progress is held, so
 * a 50 MB answer of 100,000 items never sits in memory, as text or parsed.
 *
 * Every element is checked by `JSON.parse`, and the scanner checks what lies between them (commas, the
 * brackets, whitespace), so a body that is not one JSON array is refused as a whole, as before.
 *
 * The complete elements of one chunk (a run) are parsed by one `JSON.parse`, in brackets: between them lie
 * only the commas and whitespace the scanner checked: about a fifth less CPU than a call per element for the
 * store's items (issue 27: a reconcile reads a million). A run that does not parse is read again element by element, so
 * the elements before a broken one are still handed over and the error is the broken element's own.
 */

/** Bytes that matter to the scanner. */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** Where the scanner stands. */
const enum At {
  /** Before the opening bracket. */
  Start,
  /** After `[`: an element or `]`. */
  First,
  /** After `,`: an element. */
  Next,
  /** Inside an element. */
  Element,
  /** After an element: `,` or `]`. */
  After,
  /** After `]`: whitespace only. */
  End,
}

/** Splits a streamed JSON array into its elements; see the module comment. */
export class JsonArrayReader {
  readonly #visit: (element: unknown) => void;
  #at = At.Start;
  /** Bytes of the element in progress that came in earlier chunks. */
  #held: Buffer[] = [];
  /** Inside the element: bracket depth, inside a string, after a backslash inside a string. */
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Bytes read before the current chunk (for error positions). */
  #offset = 0;
  /** Where the complete elements of the current chunk start and end (exclusive), in turn: a run to parse. */
  #run: number[] = [];

  /** `visit` gets each element parsed, in order; an error it throws stops the reading and passes through. */
  constructor(visit: (element: unknown) => void) {
    this.#visit = visit;
  }

  /** True once the array's closing bracket was read. */
  get isEnded(): boolean {
    return this.#at === At.End;
  }

  /** Reads the next bytes of the body; throws a SyntaxError where the body stops being one JSON array. */
  write(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const length = bytes.length;
    // Where the element in progress starts in this chunk (0 when it started in an earlier one).
    let start = 0;
    // The next backslash of the chunk, found once and moved forward only when passed: strings skip to their
    // closing quote with indexOf, and a backslash before that quote means an escape to step over.
    let backslash = -2;
    let i = 0;
    while (i < length) {
      if (this.#at === At.Element) {
        if (this.#inString) {
          if (this.#escaped) {
            this.#escaped = false;
            i += 1;
            continue;
          }
          const quote = bytes.indexOf(QUOTE, i);
          if (backslash !== -1 && backslash < i) backslash = bytes.indexOf(BACKSLASH, i);
          if (backslash !== -1 && (quote === -1 || backslash < quote)) {
            this.#escaped = true;
            i = backslash + 1;
            continue;
          }
          if (quote === -1) break;
          this.#inString = false;
          i = quote + 1;
          if (this.#depth === 0) this.#emit(bytes, start, i);
          continue;
        }
        const byte = bytes[i]!;
        if (byte === QUOTE) this.#inString = true;
        else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) this.#depth += 1;
        else if (this.#depth > 0) {
          if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
            this.#depth -= 1;
            if (this.#depth === 0) {
              i += 1;
              this.#emit(bytes, start, i);
              continue;
            }
          }
        } else if (byte === COMMA || byte === CLOSE_ARRAY || isSpace(byte)) {
          // The end of a top-level number or literal: the byte belongs to what follows it.
          this.#emit(bytes, start, i);
          continue;
        }
        i += 1;
        continue;
      }
      const byte = bytes[i]!;
      if (!isSpace(byte)) {
        switch (this.#at) {
          case At.Start:
            if (byte !== OPEN_ARRAY) this.#unexpected(bytes, i);
            this.#at = At.First;
            break;
          case At.After:
            if (byte === COMMA) this.#at = At.Next;
            else if (byte === CLOSE_ARRAY) this.#at = At.End;
            else this.#unexpected(bytes, i);
            break;
          case At.First:
          case At.Next:
            if (byte === CLOSE_ARRAY && this.#at === At.First) {
              this.#at = At.End;
              break;
            }
            if (byte === CLOSE_ARRAY || byte === COMMA || byte === CLOSE_OBJECT) this.#unexpected(bytes, i);
            this.#at = At.Element;
            start = i;
            // The byte is read again as the element's first.
            continue;
          case At.End:
            this.#unexpected(bytes, i);
        }
      }
      i += 1;
    }
    this.#parseRun(bytes);
    if (this.#at === At.Element) this.#held.push(Buffer.from(bytes.subarray(start)));
    this.#offset += length;
  }

  /** Takes the element that ends at `end` (exclusive) of `bytes`: into the run, or (begun in an earlier chunk) parsed now. */
  #emit(bytes: Buffer, start: number, end: number): void {
    this.#at = At.After;
    this.#depth = 0;
    if (this.#held.length === 0) {
      this.#run.push(start, end);
      return;
    }
    const text = Buffer.concat([...this.#held, bytes.subarray(start, end)]).toString('utf8');
    this.#held = [];
    this.#visit(JSON.parse(text));
  }

  /** Parses the run of `bytes` and hands its elements over, in order. */
  #parseRun(bytes: Buffer): void {
    const run = this.#run;
    if (run.length === 0) return;
    this.#run = [];
    let elements: unknown[] | undefined;
    if (run.length > 2) {
      try {
        elements = JSON.parse(`[${bytes.toString('utf8', run[0], run.at(-1))}]`) as unknown[];
      } catch {
        // Read again one by one below: the broken element throws its own error, after those before it.
      }
    }
    if (elements === undefined) for (let i = 0; i < run.length; i += 2) this.#visit(JSON.parse(bytes.toString('utf8', run[i], run[i + 1])));
    else for (const element of elements) this.#visit(element);
  }

  #unexpected(bytes: Buffer, index: number): never {
    // The elements before the unexpected byte are handed over first, as they were read.
    this.#parseRun(bytes);
    throw new SyntaxError(`unexpected ${JSON.stringify(String.fromCharCode(bytes[index]!))} at byte ${this.#offset + index}`);
  }
}
