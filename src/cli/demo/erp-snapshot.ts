/**
 * The demo ERP's full "all items" export, which the reconcile compares with the store. It holds what
 * the ERP has once every sample export is applied in order, read by the demo source's own rules (so
 * the two cannot disagree), except for a few deliberate differences: stock counted at a stocktake
 * whose change never came through the drop folder. The reconcile finds exactly those and fixes them.
 */
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import type { CsvSourceConfig } from '../../config/schema.js';
import { readCsvFile } from '../../erp/csv-file.js';
import { INVENTORY_FIELDS } from '../../erp/fields.js';

/** One SKU in this many gets a stock the drop folder never carried (5 of the 200 sample items). */
const DRIFT_EVERY = 40;

/** Units the stocktake found on top of what the exports said. */
const DRIFT_UNITS = 7;

/** The ERP's items after the sample exports (sorted by name, which is their time), by Code. */
async function sampleState(samplesDir: string, source: CsvSourceConfig): Promise<Map<string, Record<string, unknown>>> {
  const options = {
    delimiter: source.delimiter,
    encoding: source.encoding,
    decimalComma: source.decimalComma,
    mapping: source.mapping,
    catalog: INVENTORY_FIELDS,
    onIgnored: () => undefined,
  };
  const items = new Map<string, Record<string, unknown>>();
  const names = (await readdir(samplesDir)).filter((name) => name.toLowerCase().endsWith('.csv')).sort();
  for (const name of names) {
    const { records } = await readCsvFile(join(samplesDir, name), name, null, options);
    for (const { fields } of records) {
      const code = String(fields.Code);
      items.set(code, { ...items.get(code), ...fields });
    }
  }
  return items;
}

/** One cell as the source will read it back: decimal comma when configured, quoted when needed. */
function cell(value: unknown, delimiter: string, decimalComma: boolean): string {
  let text: string;
  if (typeof value === 'number') text = decimalComma ? String(value).replace('.', ',') : String(value);
  else if (typeof value === 'object' && value !== null) text = JSON.stringify(value);
  else text = String(value ?? '');
  return text.includes(delimiter) || /["\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Writes `source.snapshotFile` from the sample exports with a few SKUs' stock changed; returns those
 * SKUs. The file is dated 30 s back: after the sample exports (dated a minute back), so its values
 * are the newer ones, and settled, so the source reads it at once.
 */
export async function writeErpSnapshot(samplesDir: string, source: CsvSourceConfig & { snapshotFile: string }): Promise<string[]> {
  const items = await sampleState(samplesDir, source);
  const codes = [...items.keys()].sort();
  const drifted = codes.filter((_, i) => i % DRIFT_EVERY === DRIFT_EVERY / 2 - 1);
  for (const code of drifted) {
    const fields = items.get(code) as Record<string, unknown>;
    fields.Stock = Number(fields.Stock ?? 0) + DRIFT_UNITS;
  }
  const present = new Set([...items.values()].flatMap((fields) => Object.keys(fields)));
  const columns = Object.keys(INVENTORY_FIELDS).filter((field) => present.has(field));
  const delimiter = source.delimiter === 'auto' ? (source.decimalComma ? ';' : ',') : source.delimiter;
  const lines = [columns.join(delimiter)];
  for (const code of codes) {
    const fields = items.get(code) as Record<string, unknown>;
    lines.push(columns.map((column) => cell(fields[column], delimiter, source.decimalComma)).join(delimiter));
  }
  await mkdir(dirname(source.snapshotFile), { recursive: true });
  await writeFile(source.snapshotFile, Buffer.from(`${lines.join('\n')}\n`, source.encoding));
  const written = new Date(Date.now() - 30_000);
  await utimes(source.snapshotFile, written, written);
  return drifted;
}
