/**
 * Reading one ERP CSV export: decoding (UTF-8 or Latin-1, BOM stripped), the delimiter guessed from the
 * header line, one record per data row named `file <name> line <n>`. A row that breaks a type rule is
 * rejected on its own; a file that is not valid CSV (an unclosed quote) yields no records at all,
 * because rows read before the break cannot be trusted either.
 */
import { readFile } from 'node:fs/promises';

import { type CsvError, parse } from 'csv-parse';

import { formatIssue, type ValidationIssue } from '../errors.js';
import { type FieldCatalog, normalizeRecord } from './fields.js';
import type { Cursor, RejectedRecord, SourceRecord } from './types.js';

/** How to read a file. */
export interface CsvReadOptions {
  delimiter: 'auto' | ';' | ',' | '\t';
  encoding: 'utf8' | 'latin1';
  decimalComma: boolean;
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

/** Decodes a file; a UTF-8 byte-order mark wins over the configured encoding, and is dropped. */
export function decodeCsv(bytes: Buffer, encoding: 'utf8' | 'latin1'): string {
  if (bytes.subarray(0, 3).equals(UTF8_BOM)) return bytes.subarray(3).toString('utf8');
  const text = bytes.toString(encoding);
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
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

/** Reads and normalises one CSV file; every record carries `cursor` (the file's cursor). */
export async function readCsvFile(path: string, name: string, cursor: Cursor, options: CsvReadOptions): Promise<CsvFileContent> {
  const text = decodeCsv(await readFile(path), options.encoding);
  const delimiter = options.delimiter === 'auto' ? detectDelimiter(text) : options.delimiter;
  const parser = parse(text, { delimiter, info: true, relax_column_count: true, skip_empty_lines: true });
  const content: CsvFileContent = { records: [], rejected: [], problems: [], rows: 0 };
  let header: string[] | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (header === undefined) {
        header = record.map((column) => column.trim());
        continue;
      }
      content.rows += 1;
      const ref = `file ${name} line ${info.lines}`;
      const issues: ValidationIssue[] = [];
      // No prototype: a header named "__proto__" must stay an ordinary (ignored) column.
      const raw: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      header.forEach((column, i) => {
        if (column !== '') raw[column] = record[i];
      });
      if (record.length !== header.length) {
        issues.push({ record: ref, field: '(row)', value: `${record.length} columns`, rule: `${header.length} columns, as the header` });
      } else {
        const result = normalizeRecord(raw, options.catalog, { ...options, ref });
        if ('fields' in result) content.records.push({ ref, cursor, fields: result.fields });
        else issues.push(...result.issues);
      }
      if (issues.length > 0) {
        content.rejected.push({ ref, issues });
        content.problems.push(`line ${info.lines}: ${issues.map(formatIssue).join('; ')}`);
      }
    }
  } catch (error) {
    const csvError = error as CsvError & { lines?: number };
    const ref = `file ${name}`;
    const issue: ValidationIssue = { record: ref, field: '(file)', value: name, rule: `valid CSV (${csvError.message})` };
    return { records: [], rejected: [{ ref, issues: [issue] }], problems: [`line ${csvError.lines ?? '?'}: ${csvError.message}`], rows: content.rows };
  }
  return content;
}
