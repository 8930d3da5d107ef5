/**
 * `inventory.sites` and `inventory.allocation` (issue 20): the storefronts one ERP stock is published to,
 * and how that stock is shared among them (src/sync/inventory/listing/allocation.ts computes the figures). Kept
 * apart from schema.ts.
 */
import { z } from 'zod';

/**
 * The storefronts each ERP stock record is published to, in this order (the order `split` takes an
 * excess of reservations in). A record naming its own `SiteId` goes to that site only, and must name
 * one of these. Empty: one storefront, as before (records go to `store.siteId`, or none). @defaultValue []
 */
export const sitesOption = z
  .array(
    z
      .object({
        siteId: z.number().int().positive(),
        /** `split` only: the fraction of the sellable stock this site owns (0 to 1). */
        share: z.number().min(0).max(1).optional(),
        /** The most this site ever shows. */
        max: z.number().int().nonnegative().optional(),
        /** Units kept off this site's figure, on top of the global safety stock. @defaultValue 0 */
        safetyStock: z.number().int().nonnegative().default(0),
      })
      .strict(),
  )
  .default([]);

/**
 * `shared`: every site shows the same sellable figure (ERP − all reservations − safety), capped by its
 * `max`. `split`: each site owns `floor((ERP − safety) × share)` (capped by `max`) less its own sales'
 * reservations; an excess of reservations comes off the other sites. @defaultValue 'shared'
 */
export const allocationOption = z.enum(['shared', 'split']).default('shared');

export type SiteOption = z.infer<typeof sitesOption>[number];
export type AllocationOption = z.infer<typeof allocationOption>;

/** Checks the sites together: no site twice; shares only with `split`, there on every site and at most 1 in sum. */
export function checkSites(inventory: { sites: readonly SiteOption[]; allocation: AllocationOption }, ctx: z.RefinementCtx): void {
  const { sites, allocation } = inventory;
  const seen = new Set<number>();
  sites.forEach((site, i) => {
    if (seen.has(site.siteId)) ctx.addIssue({ code: 'custom', path: ['inventory', 'sites', i, 'siteId'], message: `each site listed once (site ${site.siteId} is listed twice)` });
    seen.add(site.siteId);
    if (allocation === 'shared' && site.share !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['inventory', 'sites', i, 'share'], message: `no share unless inventory.allocation is split (site ${site.siteId} has one)` });
    }
    if (allocation === 'split' && site.share === undefined) {
      ctx.addIssue({ code: 'custom', path: ['inventory', 'sites', i, 'share'], message: `a share for every site under inventory.allocation: split (site ${site.siteId} has none)` });
    }
  });
  if (allocation === 'split') {
    if (sites.length === 0) ctx.addIssue({ code: 'custom', path: ['inventory', 'allocation'], message: 'inventory.sites to split the stock among' });
    const total = sites.reduce((sum, site) => sum + (site.share ?? 0), 0);
    // A little slack for decimal fractions (0.7 + 0.2 + 0.1 is 1.0000000000000002 in floating point).
    if (total > 1 + 1e-9) {
      const named = sites.map((site) => `site ${site.siteId}: ${site.share ?? 0}`).join(', ');
      ctx.addIssue({ code: 'custom', path: ['inventory', 'sites'], message: `shares adding up to at most 1 (they add up to ${Number(total.toFixed(6))}: ${named})` });
    }
  }
}
