/**
 * The demo's sample ERP: CSV drop folders that storesync reads like a real ERP's exports. It starts
 * with the files shipped in `examples/erp/inventory/`, then writes stock changes and, for sales that
 * reached the ERP (the file sink), shipment updates, so that something keeps flowing.
 */
import { copyFile, mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The folders of the sample ERP. */
export interface ErpFolders {
  /** Stock and price exports (an inventory CSV source). */
  inventory: string;
  /** Shipment updates (a fulfillment CSV source). */
  shipments: string;
  /** Where the file sink writes exported sales. */
  sales: string;
}

/** Creates the folders under `root`. */
export async function createErpFolders(root: string): Promise<ErpFolders> {
  const folders = { inventory: join(root, 'erp-inventory'), shipments: join(root, 'erp-shipments'), sales: join(root, 'erp-sales') };
  await Promise.all(Object.values(folders).map((dir) => mkdir(dir, { recursive: true })));
  return folders;
}

/**
 * Copies the sample exports into the drop folder. Their times are set a minute back so that the CSV
 * source's settle delay (a file still being written is left alone) does not hold them.
 */
export async function copySampleExports(samplesDir: string, dropDir: string): Promise<string[]> {
  const names = (await readdir(samplesDir)).filter((name) => name.toLowerCase().endsWith('.csv')).sort();
  const past = new Date(Date.now() - 60_000);
  for (const name of names) {
    const target = join(dropDir, name);
    await copyFile(join(samplesDir, name), target);
    await utimes(target, past, past);
  }
  return names;
}

/** Writes an export with a new stock for `count` random items of SKU-000001 … SKU-<itemCount>. */
export async function writeStockChanges(dropDir: string, count: number, itemCount: number, random: () => number = Math.random): Promise<number> {
  const codes = new Set<string>();
  while (codes.size < Math.min(count, itemCount)) codes.add(`SKU-${String(1 + Math.floor(random() * itemCount)).padStart(6, '0')}`);
  const rows = [...codes].map((code) => `${code},${Math.floor(random() * 300)}`);
  await writeFile(join(dropDir, `changes-${Date.now()}.csv`), `Code,Stock\n${rows.join('\n')}\n`);
  return rows.length;
}

/** Sale ids of the sales the file sink exported (`sale-<site>-<id>.json`). */
export async function exportedSaleIds(salesDir: string): Promise<number[]> {
  const names = await readdir(salesDir).catch(() => [] as string[]);
  return names
    .map((name) => /^sale-\d+-(\d+)\.json$/.exec(name)?.[1])
    .filter((id): id is string => id !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/** Writes a shipment export marking `saleIds` completed with a tracking code. */
export async function writeShipments(shipmentsDir: string, saleIds: readonly number[]): Promise<void> {
  if (saleIds.length === 0) return;
  const rows = saleIds.map((id) => `${id},3,Shipped,DEMO-TRACK-${id},Shipped by the demo ERP`);
  const file = join(shipmentsDir, `shipments-${Date.now()}.csv`);
  await writeFile(file, `SaleId,Status,StatusText,TrackingCode,Obeservations\n${rows.join('\n')}\n`);
  const past = new Date(Date.now() - 60_000);
  await utimes(file, past, past);
}
