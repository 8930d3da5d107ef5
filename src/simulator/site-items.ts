/**
 * Items per site (the `itemsPerSite` start option): every item is held on each of the listed sites, each
 * copy with its own stock, flags and other fields, and its `SiteId` set to the site. The copy on the
 * first site is the very object `SimulatorState.items` holds (products, sale lines and the control API
 * read it); a write or a query that names no site uses that first site.
 */
import type { StoredItem } from './items.js';
import { Random } from './random.js';

/** Throws an Error naming the bad id when `sites` is empty, has a non-positive id or a repeat. */
export function checkSites(sites: readonly number[]): void {
  if (sites.length === 0) throw new Error('itemsPerSite: at least one site id is needed');
  const seen = new Set<number>();
  for (const site of sites) {
    if (!Number.isInteger(site) || site <= 0) throw new Error(`itemsPerSite: site id ${String(site)} must be a positive integer`);
    if (seen.has(site)) throw new Error(`itemsPerSite: site id ${site} is repeated`);
    seen.add(site);
  }
}

/** Every site's copy of every item. */
export class SiteItems {
  readonly sites: readonly number[];
  /** Site id → item code → that site's copy (sharing the item's metadata). */
  readonly #copies = new Map<number, Map<string, StoredItem>>();

  constructor(sites: readonly number[]) {
    checkSites(sites);
    this.sites = [...sites];
    for (const site of this.sites) this.#copies.set(site, new Map());
  }

  /** The first site: where writes and reads that name no site go. */
  get defaultSite(): number {
    return this.sites[0] as number;
  }

  /**
   * Drops every copy and copies `items` (the first site's records, taken as they are) to every site.
   * With `seed`, the copies on the other sites draw their own Stock, ForSale and Published (seeded data);
   * without it they start equal to the first site's.
   */
  rebuild(items: Iterable<StoredItem>, seed?: number): void {
    for (const copies of this.#copies.values()) copies.clear();
    const draws = new Map(this.sites.map((site) => [site, seed === undefined ? undefined : new Random(seed ^ 0x517e ^ site)]));
    for (const stored of items) this.add(stored, draws);
  }

  /** Holds a new item on every site; the stored record becomes the first site's copy. */
  add(stored: StoredItem, draws?: ReadonlyMap<number, Random | undefined>): void {
    stored.item.SiteId = this.defaultSite;
    this.#copies.get(this.defaultSite)?.set(stored.item.Code, stored);
    for (const site of this.sites.slice(1)) {
      const item = structuredClone(stored.item);
      item.SiteId = site;
      const rng = draws?.get(site);
      if (rng) {
        item.Stock = rng.chance(0.08) ? 0 : rng.int(1, 500);
        item.ForSale = rng.chance(0.92);
        item.Published = rng.chance(0.85);
      }
      this.#copies.get(site)?.set(item.Code, { item, meta: stored.meta });
    }
  }

  /** The copy of `code` on `site`, or undefined (an unknown site holds nothing). */
  on(site: number, code: string): StoredItem | undefined {
    return this.#copies.get(site)?.get(code);
  }

  /** Every copy of `code`, site by site. */
  copiesOf(code: string): StoredItem[] {
    return this.sites.flatMap((site) => this.#copies.get(site)?.get(code) ?? []);
  }

  /** The copies `site` holds, or every site's copies (site by site) when `site` is undefined. */
  *held(site?: number): Iterable<StoredItem> {
    for (const s of site === undefined ? this.sites : [site]) yield* this.#copies.get(s)?.values() ?? [];
  }
}
