/**
 * File sink: one JSON file per sale, `sale-<site>-<id>.json`, in a drop folder the ERP imports from.
 * The file is written under a hidden temporary name in the same folder and renamed into place, so a
 * reader never sees half a file; an existing file means the sale was already exported.
 */
import { randomUUID } from 'node:crypto';
import { access, mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { ErpError } from '../../errors.js';
import type { Sale } from '../../store/schemas/index.js';
import { defaultErpRef, type ExportResult, type SalesSink } from './types.js';

/** Options of the file sink. */
export interface FileSinkOptions {
  /** The drop folder; created when missing. */
  dir: string;
}

const NAME = 'file-sink';

/** The file a sale is written to. */
export function saleFileName(siteId: number, saleId: number): string {
  return `sale-${siteId}-${saleId}.json`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes sales as JSON files; see the module comment. */
export class FileSalesSink implements SalesSink {
  readonly kind = 'file';
  readonly #dir: string;

  constructor(options: FileSinkOptions) {
    this.#dir = options.dir;
  }

  async check(): Promise<void> {
    try {
      await mkdir(this.#dir, { recursive: true });
    } catch (error) {
      throw new ErpError(NAME, `cannot create the sales folder ${this.#dir}`, { code: 'ERR_ERP_FILE', cause: error, retryable: false });
    }
  }

  async export(sale: Sale, siteId: number): Promise<ExportResult> {
    const erpRef = defaultErpRef(siteId, sale.Id);
    const target = join(this.#dir, saleFileName(siteId, sale.Id));
    if (await exists(target)) return { erpRef, created: false };
    // A leading dot and a .tmp suffix keep ERP import patterns (`*.json`) off the unfinished file.
    const temp = join(this.#dir, `.${saleFileName(siteId, sale.Id)}.${randomUUID()}.tmp`);
    try {
      await mkdir(this.#dir, { recursive: true });
      const handle = await open(temp, 'wx');
      try {
        await handle.writeFile(`${JSON.stringify(sale, null, 2)}\n`, 'utf8');
        // Flushed before the rename: after a power cut the file is either whole or absent.
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      // Best effort: when the folder itself is the problem there is nothing to clean.
      await rm(temp, { force: true }).catch(() => undefined);
      throw new ErpError(NAME, `cannot write ${target}`, { code: 'ERR_ERP_FILE', cause: error });
    }
    return { erpRef, created: true };
  }

  async close(): Promise<void> {}
}
