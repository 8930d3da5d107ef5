import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type CsvSourceConfig, csvSourceSchema } from '../../src/config/schema.js';
import { detectDelimiter } from '../../src/erp/csv-file.js';
import { globToRegExp } from '../../src/erp/csv-source.js';
import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { ChangeSource, SourceRecord } from '../../src/erp/types.js';
import { ConfigError, ErpError } from '../../src/errors.js';
import { createLogger, silentLogger } from '../../src/log.js';

const NOW = Date.UTC(2024, 4, 1, 12, 0, 0);

describe('CSV drop-folder source', () => {
  let dir: string;
  let clock: number;

  function source(overrides: Partial<CsvSourceConfig> = {}): ChangeSource {
    const config = csvSourceSchema.parse({ name: 'erp-drop', kind: 'csv', schedule: '* * * * * *', dir, ...overrides });
    return createSource(config, { fields: INVENTORY_FIELDS, logger: silentLogger(), now: () => clock });
  }

  /** Writes a file last modified `ageMs` before the test clock (settled unless told otherwise). */
  async function drop(name: string, content: string | Buffer, ageMs = 60_000): Promise<void> {
    await writeFile(join(dir, name), content);
    const mtime = new Date(NOW - ageMs);
    await utimes(join(dir, name), mtime, mtime);
  }

  const list = async (sub = ''): Promise<string[]> => (await readdir(join(dir, sub))).sort();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storesync-csv-'));
    clock = NOW;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a comma file and a semicolon file with decimal commas, each by its own header', async () => {
    await drop('a-stock.csv', 'Code,Stock\nSKU-1,5\nSKU-2,0\n', 120_000);
    await drop('b-precios.csv', 'Codigo;Precio;Publicado\nSKU-1;1.234,50;si\n', 60_000);
    const mapping = { Codigo: 'Code', Precio: 'Price', Publicado: 'Published' };
    const batch = await source({ decimalComma: true, mapping }).readChanges(null, 100);
    expect(batch.rejected).toEqual([]);
    expect(batch.records).toEqual([
      { ref: 'file a-stock.csv line 2', cursor: new Date(NOW - 120_000).toISOString(), fields: { Code: 'SKU-1', Stock: 5 } },
      { ref: 'file a-stock.csv line 3', cursor: new Date(NOW - 120_000).toISOString(), fields: { Code: 'SKU-2', Stock: 0 } },
      { ref: 'file b-precios.csv line 2', cursor: new Date(NOW - 60_000).toISOString(), fields: { Code: 'SKU-1', Price: 1234.5, Published: true } },
    ]);
    expect(batch.nextCursor).toBe(new Date(NOW - 60_000).toISOString());
  });

  it('strips a UTF-8 byte-order mark and decodes Latin-1 files', async () => {
    await drop('bom.csv', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Code;Name\nSKU-1;Ñandú\n', 'utf8')]));
    await drop('latin1.csv', Buffer.from('Código;Descripción\nSKU-2;Año ñandú\n', 'latin1'));
    const batch = await source({ encoding: 'latin1', mapping: { Código: 'Code', Descripción: 'Name' } }).readChanges(null, 100);
    expect(batch.records.map((r) => r.fields)).toEqual([
      { Code: 'SKU-1', Name: 'Ñandú' },
      { Code: 'SKU-2', Name: 'Año ñandú' },
    ]);
  });

  it('leaves a file modified within settleMs for a later poll', async () => {
    await drop('half.csv', 'Code,Stock\nSKU-1,5\n', 500);
    const erp = source({ settleMs: 2000 });
    expect((await erp.readChanges(null, 100)).records).toEqual([]);
    clock = NOW + 2000;
    expect((await erp.readChanges(null, 100)).records).toHaveLength(1);
  });

  it('moves nothing before commit, and moves each file to processed/ on commit', async () => {
    await drop('stock.csv', 'Code,Stock\nSKU-1,5\n');
    const erp = source();
    const batch = await erp.readChanges(null, 100);
    expect(await list()).toEqual(['stock.csv']);

    // Another process (after a crash before queueing) reads the same file again.
    expect((await source().readChanges(null, 100)).records).toHaveLength(1);

    await erp.commit!(batch);
    expect(await list()).toEqual(['processed']);
    expect(await list('processed')).toEqual(['2024-05-01T12-00-00-000Z_stock.csv']);
    // Committing the same batch twice is harmless: it resolves and moves nothing more.
    await expect(erp.commit!(batch)).resolves.toBeUndefined();
    expect(await list()).toEqual(['processed']);
    expect(await list('processed')).toEqual(['2024-05-01T12-00-00-000Z_stock.csv']);
  });

  it('queues the good rows of a partly bad file and moves it to rejected/ with a report naming each bad row', async () => {
    await drop('mixed.csv', 'Code,Stock,Price\nSKU-1,5,10.50\nSKU-2,12abc,1\n,3,1\nSKU-4,1\n');
    const erp = source();
    const batch = await erp.readChanges(null, 100);
    expect(batch.records.map((r) => r.fields.Code)).toEqual(['SKU-1']);
    expect(batch.rejected.map((r) => r.ref)).toEqual(['file mixed.csv line 3', 'file mixed.csv line 4', 'file mixed.csv line 5']);

    await erp.commit!(batch);
    expect(await list('rejected')).toEqual(['2024-05-01T12-00-00-000Z_mixed.csv', '2024-05-01T12-00-00-000Z_mixed.csv.errors.txt']);
    const report = await readFile(join(dir, 'rejected', '2024-05-01T12-00-00-000Z_mixed.csv.errors.txt'), 'utf8');
    expect(report.split('\n')).toEqual([
      'mixed.csv: 3 of 4 rows rejected by storesync source "erp-drop" at 2024-05-01T12:00:00.000Z; the other rows were queued.',
      'line 3: SKU-2: field Stock = "12abc" breaks "integer"',
      'line 4: file mixed.csv line 4: field Code = "" breaks "required"',
      'line 5: file mixed.csv line 5: field (row) = "2 columns" breaks "3 columns, as the header"',
      '',
    ]);
  });

  it('rejects a whole file that is not valid CSV', async () => {
    await drop('broken.csv', 'Code,Stock\nSKU-1,5\n"SKU-2,3\n');
    const erp = source();
    const batch = await erp.readChanges(null, 100);
    expect(batch.records).toEqual([]);
    expect(batch.rejected).toHaveLength(1);
    await erp.commit!(batch);
    expect(await list('rejected')).toHaveLength(2);
  });

  it('does not split a file across batches and reads the oldest files first', async () => {
    await drop('new.csv', 'Code,Stock\nSKU-9,1\n', 1_000);
    await drop('old.csv', 'Code,Stock\nSKU-1,1\nSKU-2,2\nSKU-3,3\n', 90_000);
    const batch = await source().readChanges(null, 2);
    expect(batch.records.map((r) => r.fields.Code)).toEqual(['SKU-1', 'SKU-2', 'SKU-3']);
  });

  it('does not hand out an uncommitted file again to a caller whose cursor is past it', async () => {
    await drop('one.csv', 'Code,Stock\nSKU-1,1\n', 90_000);
    await drop('two.csv', 'Code,Stock\nSKU-2,2\n', 30_000);
    const erp = source();
    const first = await erp.readChanges(null, 1);
    expect(first.records.map((r) => r.fields.Code)).toEqual(['SKU-1']);
    const second = await erp.readChanges(first.nextCursor, 1);
    expect(second.records.map((r) => r.fields.Code)).toEqual(['SKU-2']);
    // A caller retrying with the old cursor (its enqueue failed) gets the first file again.
    expect((await erp.readChanges(null, 1)).records.map((r) => r.fields.Code)).toEqual(['SKU-1']);
  });

  it('leaves a file that changed after it was read, to be read again', async () => {
    await drop('stock.csv', 'Code,Stock\nSKU-1,5\n');
    const erp = source();
    const batch = await erp.readChanges(null, 100);
    await drop('stock.csv', 'Code,Stock\nSKU-1,5\nSKU-2,6\n', 10_000);
    await erp.commit!(batch);
    expect(await list()).toEqual(['stock.csv']);
    expect((await erp.readChanges(batch.nextCursor, 100)).records).toHaveLength(2);
  });

  it('only picks files matching the pattern, ignoring case', async () => {
    await drop('STOCK.CSV', 'Code,Stock\nSKU-1,5\n');
    await drop('notes.txt', 'Code,Stock\nSKU-2,5\n');
    expect((await source({ pattern: 'stock*.csv' }).readChanges(null, 100)).records).toHaveLength(1);
    expect(globToRegExp('a?.csv').test('ab.csv')).toBe(true);
    expect(globToRegExp('*.csv').test('a.csv.tmp')).toBe(false);
  });
});

describe('CSV helpers', () => {
  it('detects ; or , from the header line, ignoring delimiters inside quotes', () => {
    expect(detectDelimiter('Code;Stock;Price\n1,2,3,4,5')).toBe(';');
    expect(detectDelimiter('"a;b;c",Stock\n')).toBe(',');
    expect(detectDelimiter('Code\tStock\n')).toBe('\t');
    expect(detectDelimiter('Code\n')).toBe(',');
  });
});

describe('CSV source snapshot (snapshotFile)', () => {
  let root: string;
  let drop: string;
  let snapshotFile: string;
  let lines: string[];

  function source(overrides: Partial<CsvSourceConfig> = {}): ChangeSource {
    const config = csvSourceSchema.parse({ name: 'erp-drop', kind: 'csv', schedule: '* * * * * *', dir: drop, snapshotFile, ...overrides });
    const logger = createLogger({ level: 'warn', destination: { write: (line: string) => lines.push(line) } });
    return createSource(config, { fields: INVENTORY_FIELDS, logger, now: () => NOW });
  }

  /** Writes the snapshot file, last modified `ageMs` before the test clock. */
  async function writeSnapshot(content: string | Buffer, ageMs = 60_000): Promise<void> {
    await writeFile(snapshotFile, content);
    const mtime = new Date(NOW - ageMs);
    await utimes(snapshotFile, mtime, mtime);
  }

  async function collect(erp: ChangeSource): Promise<SourceRecord[][]> {
    const chunks: SourceRecord[][] = [];
    for await (const chunk of erp.snapshot!()) chunks.push(chunk);
    return chunks;
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'storesync-csv-snapshot-'));
    drop = join(root, 'drop');
    await mkdir(drop);
    snapshotFile = join(root, 'all-items.csv');
    lines = [];
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('streams every row in chunks of limit, coerced, and leaves the file unchanged in place', async () => {
    // Over 64 KiB with multi-byte names, so rows and characters cross the file's read chunks.
    const rows = Array.from({ length: 2500 }, (_, i) => `SKU-${String(i + 1).padStart(6, '0')},${i % 50},${i}.25,Ñandú año ${i}`);
    const content = `Code,Stock,Price,Name\n${rows.join('\n')}\n`;
    await writeSnapshot(content);
    const before = await stat(snapshotFile);

    const chunks = await collect(source({ limit: 1000 }));

    expect(chunks.map((chunk) => chunk.length)).toEqual([1000, 1000, 500]);
    const records = chunks.flat();
    expect(records[0]).toEqual({
      ref: 'file all-items.csv line 2',
      cursor: new Date(NOW - 60_000).toISOString(),
      fields: { Code: 'SKU-000001', Stock: 0, Price: 0.25, Name: 'Ñandú año 0' },
    });
    expect(records[2499]?.fields).toEqual({ Code: 'SKU-002500', Stock: 49, Price: 2499.25, Name: 'Ñandú año 2499' });
    expect(new Set(records.map((record) => record.fields.Code)).size).toBe(2500);
    expect(await readFile(snapshotFile, 'utf8')).toBe(content);
    expect((await stat(snapshotFile)).mtimeMs).toBe(before.mtimeMs);
    expect((await readdir(root)).sort()).toEqual(['all-items.csv', 'drop']);
  });

  it('logs and skips a bad row and yields the good ones', async () => {
    await writeSnapshot('Code,Stock\nSKU-1,5\nSKU-2,12abc\nSKU-3\nSKU-4,7\n');
    const records = (await collect(source())).flat();
    expect(records.map((record) => record.fields)).toEqual([
      { Code: 'SKU-1', Stock: 5 },
      { Code: 'SKU-4', Stock: 7 },
    ]);
    const warnings = lines.map((line) => JSON.parse(line) as { msg: string; ref: string; issues: string[] });
    expect(warnings.map((w) => [w.msg, w.ref])).toEqual([
      ['snapshot row rejected', 'file all-items.csv line 3'],
      ['snapshot row rejected', 'file all-items.csv line 4'],
    ]);
    expect(warnings[0]?.issues).toEqual(['SKU-2: field Stock = "12abc" breaks "integer"']);
  });

  it('reads a ";" export with decimal commas, mapped columns and Latin-1 text', async () => {
    await writeSnapshot(Buffer.from('Codigo;Precio;Existencia;Descripción\nSKU-1;1.234,50;3;Año\nSKU-2;0,99;0;Ñandú\n', 'latin1'));
    const mapping = { Codigo: 'Code', Precio: 'Price', Existencia: 'Stock', Descripción: 'Name' };
    const records = (await collect(source({ decimalComma: true, encoding: 'latin1', mapping }))).flat();
    expect(records.map((record) => record.fields)).toEqual([
      { Code: 'SKU-1', Price: 1234.5, Stock: 3, Name: 'Año' },
      { Code: 'SKU-2', Price: 0.99, Stock: 0, Name: 'Ñandú' },
    ]);
  });

  it('has no snapshot when snapshotFile is not set', () => {
    expect(source({ snapshotFile: undefined }).snapshot).toBeUndefined();
  });

  it('refuses a snapshot file that sits in the drop folder and matches its pattern', () => {
    expect(() => source({ snapshotFile: join(drop, 'all-items.csv') })).toThrow(ConfigError);
    expect(source({ snapshotFile: join(drop, 'all-items.txt') }).snapshot).toBeDefined();
  });

  it('fails without reading while the file changed within settleMs', async () => {
    await writeSnapshot('Code,Stock\nSKU-1,5\n', 100);
    await expect(collect(source({ settleMs: 2000 }))).rejects.toThrow(/still being written/);
  });

  it('fails with a permanent ERP error when the file is not valid CSV', async () => {
    await writeSnapshot('Code,Stock\nSKU-1,5\n"SKU-2,3\n');
    const failure = await collect(source()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ErpError);
    expect(failure).toMatchObject({ code: 'ERR_ERP_FILE', retryable: false });
  });

  it('fails with an ERP error naming the file when it does not exist', async () => {
    const failure = collect(source());
    await expect(failure).rejects.toThrow(/cannot read the snapshot file .*all-items\.csv/);
    await expect(failure).rejects.toMatchObject({ code: 'ERR_ERP_FILE', retryable: true });
  });
});
