/**
 * ERP SKUs the store lacks where their targets are: per site. A SKU shown on site 1 but not on site 2,
 * where a target of it is (its record names site 2, or site 2 is one of `inventory.sites`), is missing
 * on site 2. A SKU found on none of the sites read is looked up by code on the whole store: one living
 * on another site is reported "on site N", neither missing nor created; otherwise it is missing
 * wherever its targets are. A default target (no site) is missing only when no site read shows the SKU.
 */
import type { RecordReject } from '../../../store/records.js';
import { PRIORITY } from '../enqueue.js';
import type { InventoryRuntime } from '../runtime.js';
import { keyOf, type PriceList, targetLabel } from '../target-key.js';
import type { ReconcileReport } from '../types.js';
import type { ReconcileStaging, StagedItem } from './reconcile-staging.js';
import { findElsewhere } from './reconcile-store.js';
import { TargetRules } from './reconcile-targets.js';

/** What the missing targets' step needs. */
export interface MissingContext {
  rt: InventoryRuntime;
  /** The ERP side, and where the store showed its SKUs. */
  staging: ReconcileStaging;
  /** `inventory.sites` (ids) and `inventory.priceLists`: the target rules. */
  targetSites: readonly number[];
  lists: readonly PriceList[];
  /** The sites read (null: no filter). */
  sites: ReadonlyArray<number | null>;
  rejects: RecordReject[];
  report: ReconcileReport;
  sampleSize: number;
}

/**
 * Counts the missing targets and the SKUs on other sites into the report, and stages what creates them
 * (`inventory.createMissing`) for the queue. The staged SKUs are gone through a page at a time, in the
 * ERP's order; those the store showed on no site read are staged as absent, then gone through a page at
 * a time again, each page looked up on the whole store.
 */
export async function missingTargets(ctx: MissingContext): Promise<void> {
  const { rt, staging, report, sampleSize } = ctx;
  // An item the store sent malformed is there, only unreadable.
  const unreadable = new Set(ctx.rejects.flatMap((reject) => (reject.id === null ? [] : [reject.id])));
  let items: StagedItem[] = [];
  const missing = (rules: TargetRules, code: string, first: number, site: number | undefined): void => {
    report.missingOnStore++;
    if (report.missingSample.length < sampleSize) report.missingSample.push(targetLabel(keyOf({ code, ...(site === undefined ? {} : { siteId: site }) }), rules.lists));
    if (rt.config.inventory.createMissing) for (const item of rules.creationItems(code, first, site)) items.push({ ...item, priority: PRIORITY.other });
  };
  const stageItems = async (): Promise<void> => {
    await staging.queue(items);
    items = [];
  };
  for await (const skus of staging.skus()) {
    const erp = await staging.page(skus);
    const rules = new TargetRules(erp, ctx.targetSites, ctx.lists);
    const expected = new Map(skus.map((sku) => [sku, rules.expectedSites(erp.first(sku)!)]));
    const sites = new Set<number>();
    for (const targets of expected.values()) for (const site of targets) if (site !== undefined) sites.add(site);
    const seen = await staging.seen(skus, sites);
    const absent: string[] = [];
    for (const sku of skus) {
      if (unreadable.has(sku)) continue;
      if (!seen.any.has(sku)) {
        absent.push(sku);
        continue;
      }
      // The default target (undefined) is there: some site read showed the SKU.
      for (const site of expected.get(sku)!) if (site !== undefined && seen.on.get(site)?.has(sku) !== true) missing(rules, sku, erp.first(sku)!, site);
    }
    await staging.stageAbsent(absent);
    await stageItems();
  }
  for await (const skus of staging.absent()) {
    const elsewhere = ctx.sites.includes(null) ? new Map<string, number[]>() : await findElsewhere(rt, ctx.sites, skus, ctx.rejects);
    const erp = await staging.page(skus);
    const rules = new TargetRules(erp, ctx.targetSites, ctx.lists);
    for (const sku of skus) {
      const siteIds = elsewhere.get(sku);
      if (siteIds) {
        report.onOtherSites++;
        if (report.otherSiteSample.length < sampleSize) report.otherSiteSample.push({ sku, siteIds });
        continue;
      }
      const first = erp.first(sku)!;
      for (const site of rules.expectedSites(first)) missing(rules, sku, first, site);
    }
    await stageItems();
  }
}
