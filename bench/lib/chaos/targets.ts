/**
 * The chaos run with `--targets` (issue 20): the same disorder, with the unit of sync a target
 * `(Code, SiteId, price list)` instead of a Code.
 * - The simulator holds every item on sites 1 and 2 (`itemsPerSite`, each site its own copy, a sale
 *   taking from its own site's) and prices it on three lists: its default one (GENERAL) and the two the
 *   ERP names (MINORISTA, MAYORISTA).
 * - The daemons publish to `inventory.sites` 1 and 2, `shared` or `split` 0.6/0.4 as the seed decides,
 *   with the two lists in `inventory.priceLists`, and no `store.siteId`, so the sales pull reads both sites.
 * - The ERP's stock rows (the change log and the table without a change column) name no site: each goes
 *   to both sites, its Price to the default list. A third source reads `tabItem Price` (price-driver.ts),
 *   each row naming its list.
 * - Sales are placed on either site at random.
 * The per-Code checks of the values and of stale writes give way to the per-target ones of
 * targets-checks.ts; the others (invalid rows, rejects, sales, recovery, secrets) are the same.
 */
import type { SiteOption } from '../../../src/config/site-options.js';
import type { PriceList, Simulator } from '../../../src/simulator/index.js';
import type { Cleanup } from '../cleanup.js';
import { seededRandom } from '../random.js';
import type { CheckResult } from './checks.js';
import type { ChaosConfigInput } from './config.js';
import type { DiffTruth } from './diff-driver.js';
import type { ErpModel } from './erp-driver.js';
import { DEFAULT_LIST, PRICE_LISTS, PriceDriver, type PriceTruth } from './price-driver.js';
import {
  checkListPrices,
  checkNoStaleTargetWrites,
  checkSitesWithinSellable,
  checkSiteValues,
  listPriceMismatches,
  type SiteLayout,
  siteValueMismatches,
} from './targets-checks.js';

/** Both layouts the seed picks from. */
const LAYOUTS: readonly SiteLayout[] = [
  { allocation: 'shared', sites: [{ siteId: 1, safetyStock: 0 }, { siteId: 2, safetyStock: 0 }] },
  { allocation: 'split', sites: [{ siteId: 1, share: 0.6, safetyStock: 0 }, { siteId: 2, share: 0.4, safetyStock: 0 }] },
];

/** The `--targets` parts of one chaos run. */
export class TargetsRun {
  readonly layout: SiteLayout;
  readonly #salesBySite = new Map<number, number>();
  /** Its own random streams, so that the plain run's choices (changes, disorder) stay those of its seed. */
  readonly #siteOfSale: () => number;
  readonly #seed: number;
  #prices: PriceDriver | undefined;
  #truth: PriceTruth | undefined;
  #skus: readonly string[] = [];

  constructor(seed: number) {
    this.#seed = seed;
    this.layout = LAYOUTS[seededRandom(seed + 2)() < 0.5 ? 0 : 1] as SiteLayout;
    this.#siteOfSale = seededRandom(seed + 3);
  }

  /** One line for the run's head. */
  describe(): string {
    const sites = this.layout.sites.map((site) => `site ${site.siteId}${site.share === undefined ? '' : ` share ${site.share}`}`).join(', ');
    const lists = PRICE_LISTS.map((list) => `${list.id}:${list.code}`).join(', ');
    return `targets: allocation ${this.layout.allocation} (${sites}), price lists ${lists} (store default ${DEFAULT_LIST.id}:${DEFAULT_LIST.code})`;
  }

  /** The simulator's sites and lists (its first list is its default). */
  simOptions(): { itemsPerSite: number[]; priceLists: PriceList[] } {
    return { itemsPerSite: this.layout.sites.map((site) => site.siteId), priceLists: [DEFAULT_LIST, ...PRICE_LISTS] };
  }

  /** What the daemons' configuration adds. */
  config(): NonNullable<ChaosConfigInput['targets']> {
    const sites = this.layout.sites.map(({ siteId, share }: SiteOption) => (share === undefined ? { siteId } : { siteId, share }));
    return { sites, allocation: this.layout.allocation, priceLists: PRICE_LISTS };
  }

  /** Creates `tabItem Price` and the driver that rewrites it, `rate` item saves per second over `skus`. */
  async preparePrices(url: string, skus: readonly string[], rate: number, cleanup: Cleanup): Promise<void> {
    this.#skus = skus;
    this.#prices = new PriceDriver({ url, skus, rate, lateShare: 0.1, maxLateMs: 2000, bothShare: 0.2, random: seededRandom(this.#seed + 4) });
    cleanup.defer('price driver', () => this.#prices?.close());
    await this.#prices.prepare();
  }

  startPrices(): void {
    this.#prices?.start();
  }

  /** Stops the price driver, inserts what it still holds, and reads the table back. */
  async stopPrices(): Promise<void> {
    await this.#prices?.stop(30_000);
    this.#truth = await this.#prices?.truth();
  }

  /** The site of the next sale: either, at random. */
  saleSite(): number {
    const sites = this.layout.sites;
    const siteId = (sites[Math.floor(this.#siteOfSale() * sites.length)] as SiteOption).siteId;
    this.#salesBySite.set(siteId, (this.#salesBySite.get(siteId) ?? 0) + 1);
    return siteId;
  }

  /** What is not yet where it must be (empty: drained, as far as inventory goes). */
  mismatches(sim: Simulator, model: ErpModel, diff: DiffTruth): string[] {
    return [...siteValueMismatches(sim, this.layout, model, diff), ...listPriceMismatches(sim, this.#skus, this.#truth ?? new Map())];
  }

  /** The per-target checks, in place of checks.ts's per-Code values and stale writes. */
  checks(sim: Simulator, model: ErpModel, diff: DiffTruth, deletions: number): CheckResult[] {
    return [
      checkSiteValues(sim, this.layout, { model, diff, deletions, salesBySite: this.#salesBySite }),
      checkListPrices(sim, this.#skus, this.#truth ?? new Map(), this.#prices?.stats.rowsWritten ?? 0),
      checkNoStaleTargetWrites(sim, this.layout),
      checkSitesWithinSellable(sim, this.layout, model, diff),
    ];
  }

  stats(): Record<string, unknown> {
    return { allocation: this.layout.allocation, salesBySite: Object.fromEntries(this.#salesBySite), prices: this.#prices?.stats };
  }

  /** The store's side per site and list, for a kept run's store.json. */
  dump(sim: Simulator): Record<string, unknown> {
    const codes = [...sim.state.items.keys()];
    const sites = Object.fromEntries(this.layout.sites.map(({ siteId }) => [siteId, codes.map((code) => ({ code, stock: sim.state.itemOn(code, siteId)?.item.Stock }))]));
    const lists = Object.fromEntries([DEFAULT_LIST, ...PRICE_LISTS].map((list) => [list.code, codes.map((code) => ({ code, price: sim.state.prices?.priceOf(list.id, code)?.Price }))]));
    return { sites, lists };
  }
}
