/**
 * ERP SKUs the store lacks where their targets are: per site. A SKU shown on site 1 but not on site 2,
 * where a target of it is (its record names site 2, or site 2 is one of `inventory.sites`), is missing
 * on site 2. A SKU found on none of the sites read is looked up by code on the whole store: one living
 * on another site is reported "on site N", neither missing nor created; otherwise it is missing
 * wherever its targets are. A default target (no site) is missing only when no site read shows the SKU.
 */
import type { RecordReject } from '../../../store/records.js';
import type { InventoryRuntime } from '../runtime.js';
import type { ErpSnapshot } from '../snapshot/index.js';
import { keyOf, targetLabel } from '../target-key.js';
import type { ReconcileReport } from '../types.js';
import type { QueueItem } from './reconcile-queue.js';
import { findElsewhere } from './reconcile-store.js';
import type { TargetRules } from './reconcile-targets.js';

/** Where the store showed each ERP SKU, by its first row: on any site read, and per site (read, or named by the item). */
export class Coverage {
  readonly #rows: number;
  readonly #any: Uint8Array;
  readonly #bySite = new Map<number, Uint8Array>();

  constructor(rows: number) {
    this.#rows = rows;
    this.#any = new Uint8Array(rows);
  }

  /** The store showed the SKU whose first row is `first` on `site` (null: a read without a site filter, the item naming none). */
  see(first: number, site: number | null): void {
    this.#any[first] = 1;
    if (site === null) return;
    let seen = this.#bySite.get(site);
    if (seen === undefined) this.#bySite.set(site, (seen = new Uint8Array(this.#rows)));
    seen[first] = 1;
  }

  /** True when some site read showed the SKU. */
  anywhere(first: number): boolean {
    return this.#any[first] === 1;
  }

  /** True when the store showed the SKU on `site`; for the default target (undefined), on any site read. */
  on(first: number, site: number | undefined): boolean {
    return site === undefined ? this.anywhere(first) : this.#bySite.get(site)?.[first] === 1;
  }
}

/** What the missing targets' step needs. */
export interface MissingContext {
  rt: InventoryRuntime;
  erp: ErpSnapshot;
  rules: TargetRules;
  coverage: Coverage;
  /** The sites read (null: no filter). */
  sites: ReadonlyArray<number | null>;
  rejects: RecordReject[];
  report: ReconcileReport;
  sampleSize: number;
}

/** Counts the missing targets and the SKUs on other sites into the report; returns what creates them (`inventory.createMissing`). */
export async function missingTargets(ctx: MissingContext): Promise<QueueItem[]> {
  const { rt, erp, rules, coverage, report, sampleSize } = ctx;
  // An item the store sent malformed is there, only unreadable.
  const unreadable = new Set(ctx.rejects.flatMap((reject) => (reject.id === null ? [] : [reject.id])));
  const items: QueueItem[] = [];
  const missing = (code: string, first: number, site: number | undefined): void => {
    report.missingOnStore++;
    if (report.missingSample.length < sampleSize) report.missingSample.push(targetLabel(keyOf({ code, ...(site === undefined ? {} : { siteId: site }) }), rules.lists));
    if (rt.config.inventory.createMissing) items.push(...rules.creationItems(code, first, site));
  };
  const absent: Array<[string, number]> = [];
  for (const [sku, first] of erp.skus()) {
    if (unreadable.has(sku)) continue;
    if (!coverage.anywhere(first)) {
      absent.push([sku, first]);
      continue;
    }
    for (const site of rules.expectedSites(first)) if (!coverage.on(first, site)) missing(sku, first, site);
  }
  const elsewhere = ctx.sites.includes(null) ? new Map<string, number[]>() : await findElsewhere(rt, ctx.sites, absent.map(([sku]) => sku), ctx.rejects);
  for (const [sku, first] of absent) {
    const siteIds = elsewhere.get(sku);
    if (siteIds) {
      report.onOtherSites++;
      if (report.otherSiteSample.length < sampleSize) report.otherSiteSample.push({ sku, siteIds });
      continue;
    }
    for (const site of rules.expectedSites(first)) missing(sku, first, site);
  }
  return items;
}
