/**
 * One ERP stock across several storefronts (`inventory.sites`, `inventory.allocation`; issue 20).
 *
 * Every figure is computed from the same three inputs, the Code's ERP stock, its reservations (per Code,
 * each with the site of its sale) and the safety stocks, so the worker of each site's target computes
 * the whole allocation and publishes its own site's part of it: no site needs another site's state.
 *
 *     sellable = max(0, ERP − safety − all reservations)
 *
 * `shared`: every site shows `min(max_s, max(0, sellable − siteSafety_s))`. A sale on any site lowers every
 * site's figure (the reservation is per Code).
 *
 * `split`: each site owns a part `part_i = min(max_i, floor((ERP − safety) × share_i))` and shows
 * `head_i = max(0, part_i − siteSafety_i − reserved_i)`, `reserved_i` being its own sales' reservations.
 * When a site's reservations exceed its part (or a sale came from a site not listed), the excess
 * `E = Σ max(0, reserved_i − part_i) + reserved_elsewhere` comes off the other sites' figures, taken in
 * the order of `inventory.sites`. Since the shares add up to at most 1,
 *
 *     Σ published_i ≤ Σ part_i − Σ reserved ≤ ERP − safety − all reservations,
 *
 * and no site ever shows more than its part of the newest ERP figure its worker read: a write never
 * raises a site above its part while an ERP decrease is still on its way to the other sites.
 * Reservations are rounded up per site (a fractional quantity holds a whole unit), which only lowers
 * the figures.
 */
import type { AllocationOption, SiteOption } from '../../../config/site-options.js';
import { targetParts } from '../target-key.js';
import type { Reservation } from './reservations.js';

/** Where a target's stock goes: its site, among the configured ones, and how they share. */
export interface Placement {
  siteId: number;
  sites: readonly SiteOption[];
  mode: AllocationOption;
}

/** One site's figure and how it was reached. */
export interface SiteFigure {
  siteId: number;
  /** `split`: the site's part of the sellable stock; `shared`: the sellable figure itself. */
  part: number;
  /** `split`: its own sales' reservations; `shared`: every reservation of the Code. */
  reserved: number;
  /** Its own safety stock, kept off on top of the global one. */
  siteSafety: number;
  /** Its `max`, when one caps it. */
  max?: number;
  /** `split`: units taken off it for other sites' excess of reservations. */
  taken: number;
  published: number;
}

/** The allocation of one Code's stock. */
export interface Allocation {
  mode: AllocationOption;
  erpStock: number;
  safetyStock: number;
  /** Every applying reservation of the Code, rounded up. */
  reservedAll: number;
  /** `ERP − safety − all reservations`, at least 0: what all sites together may show at most. */
  sellable: number;
  /** `split`: reservations more than their site's part, and of sites not listed, taken off the others. */
  excess: number;
  sites: SiteFigure[];
}

/** The placement of a target key: undefined for a target without a site, or when no sites are configured. */
export function placementOf(key: string, inventory: { sites: readonly SiteOption[]; allocation: AllocationOption }): Placement | undefined {
  if (inventory.sites.length === 0) return undefined;
  const { siteId } = targetParts(key);
  if (siteId === undefined || !inventory.sites.some((site) => site.siteId === siteId)) return undefined;
  return { siteId, sites: inventory.sites, mode: inventory.allocation };
}

/** Allocates an ERP stock among the sites; `applying` are the reservations that count against it. */
export function allocate(erpStock: number, applying: readonly Reservation[], safetyStock: number, sites: readonly SiteOption[], mode: AllocationOption): Allocation {
  const bySite = new Map<number, number>();
  for (const r of applying) bySite.set(r.siteId, (bySite.get(r.siteId) ?? 0) + r.quantity);
  const reservedAll = Math.ceil(applying.reduce((sum, r) => sum + r.quantity, 0));
  const base = Math.max(0, erpStock - safetyStock);
  const sellable = Math.max(0, base - reservedAll);
  const cap = (site: SiteOption, value: number): number => (site.max === undefined ? value : Math.min(site.max, value));
  if (mode === 'shared') {
    const figures = sites.map((site) => {
      const published = cap(site, Math.max(0, sellable - site.safetyStock));
      return { siteId: site.siteId, part: sellable, reserved: reservedAll, siteSafety: site.safetyStock, ...maxOf(site), taken: 0, published };
    });
    return { mode, erpStock, safetyStock, reservedAll, sellable, excess: 0, sites: figures };
  }
  const listed = new Set(sites.map((site) => site.siteId));
  let elsewhere = 0;
  for (const [siteId, quantity] of bySite) if (!listed.has(siteId)) elsewhere += quantity;
  const figures = sites.map((site) => {
    // A hair of slack: 100 × 0.29 is 28.999999999999996 in floating point.
    const part = cap(site, Math.floor(base * (site.share ?? 0) + 1e-9));
    const reserved = Math.ceil(bySite.get(site.siteId) ?? 0);
    return { siteId: site.siteId, part, reserved, siteSafety: site.safetyStock, ...maxOf(site), taken: 0, published: Math.max(0, part - site.safetyStock - reserved) };
  });
  const excess = figures.reduce((sum, f) => sum + Math.max(0, f.reserved - f.part), 0) + Math.ceil(elsewhere);
  let left = excess;
  for (const figure of figures) {
    if (left <= 0) break;
    figure.taken = Math.min(figure.published, left);
    figure.published -= figure.taken;
    left -= figure.taken;
  }
  return { mode, erpStock, safetyStock, reservedAll, sellable, excess, sites: figures };
}

function maxOf(site: SiteOption): { max?: number } {
  return site.max === undefined ? {} : { max: site.max };
}

/** One line per site for `inventory explain`: the figure and why. */
export function describeAllocation(allocation: Allocation): string[] {
  const lines = [
    `allocation ${allocation.mode}: ERP ${allocation.erpStock} − safety ${allocation.safetyStock} − reserved ${allocation.reservedAll} (all sites) = sellable ${allocation.sellable}` +
      (allocation.mode === 'split' && allocation.excess > 0 ? `; ${allocation.excess} reserved beyond their site's part come off the other sites` : ''),
  ];
  for (const site of allocation.sites) {
    const why: string[] = [];
    if (allocation.mode === 'split') why.push(`part ${site.part}`, `− own reservations ${site.reserved}`);
    else why.push(`sellable ${site.part}`);
    if (site.siteSafety > 0) why.push(`− site safety ${site.siteSafety}`);
    if (site.taken > 0) why.push(`− ${site.taken} for other sites' excess`);
    if (site.max !== undefined) why.push(`max ${site.max}`);
    lines.push(`  site ${site.siteId}: ${site.published} (${why.join(', ')})`);
  }
  return lines;
}
