/**
 * The ERP side of a reconcile: every snapshot read and staged in Redis (reconcile-staging.ts), each record checked as a poll
 * checks it (the store's rules, storesync's own fields, and its target: a price list of
 * `inventory.priceLists`, a SiteId of `inventory.sites`), and the sites and price lists the records
 * name collected, since the store is read once per site and per list.
 */
import type { ChangeSource } from '../../../erp/types.js';
import { validateInventoryUpdate } from '../../../store/validation.js';
import { localFieldIssues } from '../listing/index.js';
import { refusedRows } from '../snapshot/index.js';
import { codeIssues, type PriceList, priceListOf, siteIssues } from '../target-key.js';
import type { ReconcileReport } from '../types.js';
import { storeValues } from './reconcile-queue.js';
import type { ReconcileStaging, RecordToStage } from './reconcile-staging.js';

/** What the ERP side holds once read. */
export interface ErpSide {
  /** The accepted records, staged by SKU. */
  staging: ReconcileStaging;
  /** SiteIds the accepted records name. */
  sites: Set<number>;
  /** Ids of the price lists the accepted records name. */
  lists: Set<number>;
  /** SKUs with a record refused whole: the ERP has them, so they are no orphans. */
  refused: Set<string>;
}

/** How the ERP side is read. */
export interface ErpReadOptions {
  skuFilter: ReadonlySet<string> | undefined;
  lists: readonly PriceList[];
  /** `inventory.sites` (ids): a record naming another SiteId is refused. */
  sites: readonly number[];
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** Stages every snapshot as SKU → its records (fields and cursor only), checked on the way, counting into `report`. */
export async function readErp(sources: readonly ChangeSource[], report: ReconcileReport, staging: ReconcileStaging, options: ErpReadOptions): Promise<ErpSide> {
  const side: ErpSide = { staging, sites: new Set(), lists: new Set(), refused: new Set() };
  const { skuFilter } = options;
  for (const [index, source] of sources.entries()) {
    for await (const chunk of source.snapshot!()) {
      const accepted: RecordToStage[] = [];
      options.signal?.throwIfAborted();
      const refusedWhole = refusedRows(chunk, skuFilter);
      report.erpRecords += refusedWhole;
      report.rejected += refusedWhole;
      // A row the source could not read is left out of the snapshot; its SKU is still the ERP's, no orphan.
      for (const bad of chunk.rejected ?? []) for (const issue of bad.issues) if (issue.record !== undefined) side.refused.add(issue.record);
      for (const record of chunk) {
        const sku = typeof record.fields.Code === 'string' ? record.fields.Code : undefined;
        if (sku === undefined || (skuFilter && !skuFilter.has(sku))) continue;
        report.erpRecords++;
        const list = priceListOf(record.fields, options.lists, sku);
        const refused =
          validateInventoryUpdate(storeValues(record.fields), sku).length > 0 ||
          localFieldIssues(record, sku).length > 0 ||
          codeIssues(sku).length > 0 ||
          (list !== undefined && !('id' in list)) ||
          siteIssues(record.fields, options.sites, sku).length > 0;
        if (refused) {
          report.rejected++;
          side.refused.add(sku);
          continue;
        }
        // Some fields refused (a fractional Stock under stockRounding: reject): counted, the others compared.
        if (record.refused) report.rejected++;
        const siteId = record.fields.SiteId;
        if (typeof siteId === 'number' && Number.isInteger(siteId) && siteId > 0) side.sites.add(siteId);
        if (list !== undefined && 'id' in list) side.lists.add(list.id);
        accepted.push({ sku, source: index, cursor: record.cursor, fields: record.fields });
      }
      await staging.stage(accepted);
      options.onProgress?.(report.erpRecords, report.erpRecords);
    }
  }
  return side;
}
