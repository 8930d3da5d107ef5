/**
 * Reading one ERP CSV export: decoding (UTF-8 or Latin-1, BOM stripped), the delimiter guessed from the
 * header line, one record per data row named `file <name> line <n>`. A row that breaks a type rule is
 * rejected on its own; a drop-folder file that is not valid CSV (an unclosed quote) yields no records
 * at all, because rows read before the break cannot be trusted either.
 *
 * The file is streamed (`readCsvRows`), so a 100k-row snapshot export never sits in memory whole;
 * `readCsvFile` collects one drop-folder file, which the source hands out as one batch anyway.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';

import { CsvError, parse } from 'csv-parse';

import { formatIssue, type ValidationIssue } from '../errors.js';
import { type FieldCatalog, normalizeRecord, type StockRounding } from './fields.js';
import type { Cursor, RejectedRecord, SourceRecord } from './types.js';

/** How to read a file. */
export interface CsvReadOptions {
  delimiter: 'auto' | ';' | ',' | '\t';
  encoding: 'utf8' | 'latin1';
  decimalComma: boolean;
  /** What a fractional Stock becomes (the source's `stockRounding`). @defaultValue 'floor' */
  stockRounding?: StockRounding;
  mapping: Readonly<Record<string, string>>;
  catalog: FieldCatalog;
  onIgnored: (column: string) => void;
}

/** A file's good records, its rejected rows, and one report line per rejected row. */
export interface CsvFileContent {
  records: SourceRecord[];
  rejected: RejectedRecord[];
  /** `line 12: SKU-1: field Stock = "12abc" breaks "integer"`, for the report beside a rejected file. */
  problems: string[];
  /** Data rows read (good and bad). */
  rows: number;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** One data row of a file: its record, or why it was rejected. */
export type CsvRow = { line: number; record: SourceRecord } | { line: number; rejected: RejectedRecord };

/** A decoder for a file starting with `head`: a UTF-8 byte-order mark wins over the configured encoding, and is skipped. */
function decoderFor(head: Buffer, encoding: 'utf8' | 'latin1'): { decoder: StringDecoder; skip: number } {
  const bom = head.subarray(0, UTF8_BOM.length).equals(UTF8_BOM);
  return { decoder: new StringDecoder(bom ? 'utf8' : encoding), skip: bom ? UTF8_BOM.length : 0 };
}

/** The file's text, decoded as it is read (a UTF-8 character split across two reads stays whole). */
async function* decodedChunks(path: string, encoding: 'utf8' | 'latin1'): AsyncGenerator<string> {
  let head = Buffer.alloc(0);
  let decoder: StringDecoder | undefined;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    if (decoder) {
      yield decoder.write(chunk);
      continue;
    }
    head = Buffer.concat([head, chunk]);
    if (head.length < UTF8_BOM.length) continue;
    const start = decoderFor(head, encoding);
    decoder = start.decoder;
    yield decoder.write(head.subarray(start.skip));
  }
  if (decoder) yield decoder.end();
  else yield decoderFor(head, encoding).decoder.end(head);
}

/** The delimiter used most on the header line, outside quotes: `;` (Spanish Excel), `,` or tab. */
export function detectDelimiter(text: string): ';' | ',' | '\t' {
  const counts = { ';': 0, ',': 0, '\t': 0 };
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && ch in counts) counts[ch as keyof typeof counts] += 1;
  }
  const best = (Object.entries(counts) as [';' | ',' | '\t', number][]).sort((a, b) => b[1] - a[1])[0];
  return best && best[1] > 0 ? best[0] : ',';
}

/**
 * Streams the data rows of one CSV file, each record carrying `cursor`. Throws csv-parse's `CsvError`
 * when the file is not valid CSV (the rows yielded before came before the break), and the file
 * system's error when it cannot be read.
 */
export async function* readCsvRows(path: string, name: string, cursor: Cursor, options: CsvReadOptions): AsyncGenerator<CsvRow> {
  const chunks = decodedChunks(path, options.encoding);
  // The delimiter is guessed from the header line: read until it is complete.
  let head = '';
  let ended = false;
  while (!ended && !/[\r\n]/.test(head)) {
    const next = await chunks.next();
    if (next.done) ended = true;
    else head += next.value;
  }
  const delimiter = options.delimiter === 'auto' ? detectDelimiter(head) : options.delimiter;
  const parser = parse({ delimiter, info: true, relax_column_count: true, skip_empty_lines: true });
  const text = (async function* () {
    if (head !== '') yield head;
    yield* chunks;
  })();
  // Errors on either side reach the loop below through the parser; this only has to be awaited.
  const feeding = pipeline(Readable.from(text), parser).catch(() => undefined);
  try {
    let header: string[] | undefined;
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (header === undefined) {
        header = record.map((column) => column.trim());
        continue;
      }
      yield toRow(header, record, info.lines, name, cursor, options);
    }
  } finally {
    // A consumer that stops early (or an error) closes the file.
    parser.destroy();
    await feeding;
  }
}

/** Normalises one data row against the header. */
function toRow(header: readonly string[], record: readonly string[], line: number, name: string, cursor: Cursor, options: CsvReadOptions): CsvRow {
  const ref = `file ${name} line ${line}`;
  if (record.length !== header.length) {
    const issue = { record: ref, field: '(row)', value: `${record.length} columns`, rule: `${header.length} columns, as the header` };
    return { line, rejected: { ref, issues: [issue] } };
  }
  // No prototype: a header named "__proto__" must stay an ordinary (ignored) column.
  const raw: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  header.forEach((column, i) => {
    if (column !== '') raw[column] = record[i];
  });
  const result = normalizeRecord(raw, options.catalog, { ...options, ref });
  if (!('fields' in result)) return { line, rejected: { ref, issues: result.issues } };
  return { line, record: result.refused ? { ref, cursor, fields: result.fields, refused: result.refused } : { ref, cursor, fields: result.fields } };
}

/** Reads and normalises one CSV file; every record carries `cursor` (the file's cursor). */
export async function readCsvFile(path: string, name: string, cursor: Cursor, options: CsvReadOptions): Promise<CsvFileContent> {
  const content: CsvFileContent = { records: [], rejected: [], problems: [], rows: 0 };
  try {
    for await (const row of readCsvRows(path, name, cursor, options)) {
      content.rows += 1;
      if ('record' in row) {
        content.records.push(row.record);
      } else {
        content.rejected.push(row.rejected);
        content.problems.push(`line ${row.line}: ${row.rejected.issues.map(formatIssue).join('; ')}`);
      }
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const ref = `file ${name}`;
    const issue: ValidationIssue = { record: ref, field: '(file)', value: name, rule: `valid CSV (${error.message})` };
    const lines = (error as CsvError & { lines?: number }).lines ?? '?';
    return { records: [], rejected: [{ ref, issues: [issue] }], problems: [`line ${lines}: ${error.message}`], rows: content.rows };
  }
  return content;
}
