import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { FileSalesSink } from '../../../src/erp/sinks/file-sink.js';
import { ErpError } from '../../../src/errors.js';
import { sampleSale } from './sale-fixture.js';

describe('file sink', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storesync-file-sink-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes one complete JSON file per sale and leaves no temporary file behind', async () => {
    const sink = new FileSalesSink({ dir: join(dir, 'out') });
    await sink.check();
    expect(await sink.export(sampleSale(31), 1)).toEqual({ erpRef: '1-31', created: true });
    expect(await readdir(join(dir, 'out'))).toEqual(['sale-1-31.json']);
    const written = JSON.parse(await readFile(join(dir, 'out', 'sale-1-31.json'), 'utf8'));
    expect(written).toMatchObject({ Id: 31, ExternalReference: 'WEB-31', Items: [{ Code: 'MATE-01' }, { Code: 'BOMB-02' }] });
  });

  it('treats an existing file as already exported and leaves it untouched', async () => {
    const sink = new FileSalesSink({ dir });
    await sink.export(sampleSale(32), 1);
    const before = await readFile(join(dir, 'sale-1-32.json'), 'utf8');
    expect(await sink.export(sampleSale(32, { Total: 1 }), 1)).toEqual({ erpRef: '1-32', created: false });
    expect(await readFile(join(dir, 'sale-1-32.json'), 'utf8')).toBe(before);
    expect(await readdir(dir)).toEqual(['sale-1-32.json']);
  });

  it('fails with a retryable ERP error, cleaning its temporary file, when the folder cannot be written', async () => {
    const blocked = join(dir, 'not-a-dir');
    await writeFile(blocked, 'a file where the folder should be');
    const sink = new FileSalesSink({ dir: blocked });
    const error = await sink.export(sampleSale(33), 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect(error).toMatchObject({ code: 'ERR_ERP_FILE', retryable: true });
    expect(await readdir(dir)).toEqual(['not-a-dir']);
    await expect(sink.check()).rejects.toThrow(/cannot create the sales folder/);
  });
});
