/**
 * The ERP side of a reconcile, held compactly while the store's inventory streams past it. A reconcile
 * must hold every SKU of the snapshot, so this is most of its memory: an object per record (its fields,
 * its cursor as an ISO string, a wrapper) costs about 320 bytes a SKU, 300 MB for a million. Here the
 * records are rows of columns instead: one array per field, whose numbers V8 keeps unboxed, a timestamp
 * cursor kept as its epoch ms, and the record's field names as a shared "shape". About 100 bytes a SKU,
 * most of them the SKU's code and its index entry; and a few large arrays instead of millions of small
 * objects leave the garbage collector little to copy or mark.
 */
import { digits } from '../../../erp/digits.js';
import type { Cursor, SnapshotChunk, SourceRecord } from '../../../erp/types.js';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Characters a timestamp as `toISOString` writes it has at fixed places: `2024-05-01T12:00:00.000Z`. */
const SEPARATORS: ReadonlyArray<[number, string]> = [[4, '-'], [7, '-'], [10, 'T'], [13, ':'], [16, ':'], [19, '.'], [23, 'Z']];

/**
 * The epoch ms of a timestamp cursor as `toCursor` stores it (`toISOString`, which those ms give back
 * exactly), else NaN. Read by hand: `Date.parse` and a check by `toISOString` cost ten times as much.
 */
export function timestampMs(cursor: Cursor): number {
  if (typeof cursor !== 'string' || cursor.length !== 24) return Number.NaN;
  for (const [at, char] of SEPARATORS) if (cursor[at] !== char) return Number.NaN;
  const year = digits(cursor, 0, 4);
  const month = digits(cursor, 5, 2);
  const day = digits(cursor, 8, 2);
  const hour = digits(cursor, 11, 2);
  const minute = digits(cursor, 14, 2);
  const second = digits(cursor, 17, 2);
  const ms = digits(cursor, 20, 3);
  // Date.UTC reads years 0–99 as 1900–1999; a day past the month's end or hour 24 would roll over.
  if (!(year >= 100 && month >= 1 && month <= 12 && day >= 1 && hour <= 23 && minute <= 59 && second <= 59 && ms >= 0)) return Number.NaN;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return Number.NaN;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/** True when the field names of `fields` but `Code` are `names`, in that order. */
function hasNames(fields: Record<string, unknown>, names: readonly string[]): boolean {
  let i = 0;
  for (const field in fields) {
    if (field === 'Code') continue;
    if (names[i++] !== field) return false;
  }
  return i === names.length;
}

/** The records of every source's snapshot, by SKU; see the module comment. */
export class ErpSnapshot {
  /** SKU → its first row. */
  readonly #first = new Map<string, number>();
  /** Row → the next row of the same SKU (another source's record): rare, so kept apart. */
  readonly #next = new Map<number, number>();
  /** Each source's name and its first row (rows are added source after source). */
  readonly #sources: Array<{ name: string; start: number }> = [];
  /** Per row: the index of its field names in `#shapes`. */
  readonly #shape: number[] = [];
  readonly #shapes: string[][] = [];
  readonly #shapeIds = new Map<string, number>();
  /** Per field, per row: the value, or 0 where the row's shape has no such field (0 keeps a column of numbers unboxed). */
  readonly #columns = new Map<string, unknown[]>();
  /** The same columns as a list, for the loop of `add`. */
  readonly #columnList: Array<{ field: string; column: unknown[] }> = [];
  /** The shape of the last row added: consecutive records of a source mostly share theirs. */
  #lastShape = -1;
  /** Per row: a timestamp cursor's epoch ms, else NaN (the cursor is then in `#otherCursors`). */
  readonly #cursorMs: number[] = [];
  /** Per row, made at the first cursor that is not a timestamp: that cursor (0 where `#cursorMs` has it). */
  #otherCursors: Cursor[] | undefined;
  #rows = 0;

  /** Rows held (records: a SKU read from two sources has two). */
  get rows(): number {
    return this.#rows;
  }

  /** SKUs held. */
  get size(): number {
    return this.#first.size;
  }

  /** Adds `record` of `source` as a row of `sku`; every field but the key `Code` is kept. */
  add(source: string, sku: string, record: Pick<SourceRecord, 'cursor' | 'fields'>): void {
    const row = this.#rows++;
    if (this.#sources.at(-1)?.name !== source) this.#sources.push({ name: source, start: row });
    const { fields } = record;
    const shape = this.#shapeOf(fields, row);
    this.#shape.push(shape);
    for (const { field, column } of this.#columnList) column.push(field in fields ? fields[field] : 0);
    this.#addCursor(row, record.cursor);
    const first = this.#first.get(sku);
    if (first === undefined) {
      this.#first.set(sku, row);
      return;
    }
    let last = first;
    for (let next = this.#next.get(last); next !== undefined; next = this.#next.get(last)) last = next;
    this.#next.set(last, row);
  }

  /** The first row of `sku`, or undefined when the ERP has no record of it. */
  first(sku: string): number | undefined {
    return this.#first.get(sku);
  }

  /** The row after `row` of the same SKU (another source's record), or undefined. */
  next(row: number): number | undefined {
    return this.#next.get(row);
  }

  /** Every SKU and its first row. */
  skus(): IterableIterator<[string, number]> {
    return this.#first.entries();
  }

  /** The row's field names (its record's, without `Code`), in the record's order. */
  fieldNames(row: number): readonly string[] {
    return this.#shapes[this.#shape[row]!]!;
  }

  /** The row's value of `field`, one of its `fieldNames` (for another field, the column's filler). */
  value(row: number, field: string): unknown {
    return this.#columns.get(field)?.[row];
  }

  /** The row's value of `field`, or undefined when its record has no such field. */
  get(row: number, field: string): unknown {
    return this.fieldNames(row).includes(field) ? this.value(row, field) : undefined;
  }

  /** The row's fields as its record had them, without `Code`. */
  fields(row: number): Record<string, unknown> {
    return Object.fromEntries(this.fieldNames(row).map((field) => [field, this.value(row, field)]));
  }

  /** The row's record's cursor. */
  cursor(row: number): Cursor {
    const ms = this.#cursorMs[row]!;
    return Number.isNaN(ms) ? (this.#otherCursors?.[row] ?? null) : new Date(ms).toISOString();
  }

  /** The name of the source the row came from. */
  source(row: number): string {
    let name = '';
    for (const source of this.#sources) if (source.start <= row) name = source.name;
    return name;
  }

  /** The index of the shape of `fields` (its field names but `Code`, in order), made when new. */
  #shapeOf(fields: Record<string, unknown>, row: number): number {
    const last = this.#shapes[this.#lastShape];
    if (last !== undefined && hasNames(fields, last)) return this.#lastShape;
    const names = Object.keys(fields).filter((field) => field !== 'Code');
    const key = names.join('\u0000');
    let shape = this.#shapeIds.get(key);
    if (shape === undefined) {
      shape = this.#shapes.push(names) - 1;
      this.#shapeIds.set(key, shape);
      for (const field of names) {
        if (this.#columns.has(field)) continue;
        const column = new Array<unknown>(row).fill(0);
        this.#columns.set(field, column);
        this.#columnList.push({ field, column });
      }
    }
    this.#lastShape = shape;
    return shape;
  }

  #addCursor(row: number, cursor: Cursor): void {
    const ms = timestampMs(cursor);
    this.#cursorMs.push(ms);
    if (!Number.isNaN(ms) && this.#otherCursors === undefined) return;
    this.#otherCursors ??= new Array<Cursor>(row).fill(0);
    this.#otherCursors.push(Number.isNaN(ms) ? cursor : 0);
  }
}

/**
 * Rows of a snapshot chunk the source refused whole (a value it could not read), counted by the reconcile
 * as ERP records and refusals; with a SKU filter only those of the filtered SKUs (a row refused for its
 * key names none and is counted).
 */
export function refusedRows(chunk: SnapshotChunk, skuFilter: ReadonlySet<string> | undefined): number {
  let count = 0;
  for (const bad of chunk.rejected ?? []) {
    const sku = bad.issues[0]?.record;
    if (!skuFilter || sku === undefined || skuFilter.has(sku)) count += 1;
  }
  return count;
}
