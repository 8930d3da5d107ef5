/**
 * The checks of the chaos run with `--targets` (two sites, two price lists; targets.ts), per target
 * `(Code, SiteId, price list)` where checks.ts checks per Code: each site's Stock is its figure of the
 * allocation (`allocate()`, the function the workers use) of the ERP's latest stock less the open
 * sales' reservations, each with its sale's site; each list's price is the ERP's latest for that list and
 * the default price the stock rows' latest; no write to a target carries an older version than one
 * already written to that target; with `split`, the sites together never show more than the ERP less
 * the reservations.
 */
import type { AllocationOption, SiteOption } from '../../../src/config/site-options.js';
import type { Simulator } from '../../../src/simulator/index.js';
import { allocate, type Allocation, type Reservation } from '../../../src/sync/inventory/listing/index.js';
import type { CheckResult } from './checks.js';
import type { DiffTruth } from './diff-driver.js';
import { type ErpModel, priceOf, versionOf } from './erp-driver.js';
import { DEFAULT_LIST, INITIAL_PRICE, listVersionOf,PRICE_LISTS, type PriceTruth } from './price-driver.js';

/** The sites the daemons publish to and how they share. */
export interface SiteLayout {
  sites: readonly SiteOption[];
  allocation: AllocationOption;
}

const sample = (items: readonly string[], n = 5): string => `${items.slice(0, n).join('; ')}${items.length > n ? ` … (${items.length} in all)` : ''}`;

/**
 * The store's open sales (statuses 0 to 3, as storesync reserves them; the chaos ERP books none) as
 * reservations per Code, each with its sale's site.
 */
export function reservationsByCode(sim: Simulator): Map<string, Reservation[]> {
  const out = new Map<string, Reservation[]>();
  for (const { sale } of sim.state.sales) {
    if (typeof sale.Status !== 'number' || sale.Status < 0 || sale.Status > 3) continue;
    for (const line of sale.Items ?? []) {
      if (typeof line.Code !== 'string' || typeof line.Quantity !== 'number') continue;
      const list = out.get(line.Code) ?? [];
      list.push({ siteId: sale.SiteId, saleId: sale.Id, quantity: line.Quantity, since: 0, raw: '' });
      out.set(line.Code, list);
    }
  }
  return out;
}

/** The ERP's latest stock and default price per Code, from both stock sources (a deleted table row: 0, no price). */
function erpFigures(model: ErpModel, diff: DiffTruth): Map<string, { stock: number; price?: number }> {
  const figures = new Map<string, { stock: number; price?: number }>();
  for (const [code, version] of model.latest) figures.set(code, { stock: version, price: priceOf(version) });
  for (const [code, row] of diff.present) figures.set(code, { stock: row.stock, price: row.price });
  for (const code of diff.absent) figures.set(code, { stock: 0 });
  return figures;
}

/** The allocation the sites of `code` must end with. */
function expected(layout: SiteLayout, erpStock: number, reservations: readonly Reservation[]): Allocation {
  return allocate(erpStock, reservations, 0, layout.sites, layout.allocation);
}

/** Each site's Stock and default Price against the allocation of the ERP's latest figure, per Code and site. */
export function siteValueMismatches(sim: Simulator, layout: SiteLayout, model: ErpModel, diff: DiffTruth): string[] {
  const reservations = reservationsByCode(sim);
  const wrong: string[] = [];
  for (const [code, erp] of erpFigures(model, diff)) {
    const held = reservations.get(code) ?? [];
    const allocation = expected(layout, erp.stock, held);
    const defaultPrice = sim.state.prices?.priceOf(DEFAULT_LIST.id, code)?.Price;
    if (erp.price !== undefined && defaultPrice !== erp.price) wrong.push(`${code} default list Price ${defaultPrice}, ERP ${erp.price}`);
    for (const figure of allocation.sites) {
      const item = sim.state.itemOn(code, figure.siteId)?.item;
      if (!item) wrong.push(`${code} missing on site ${figure.siteId}`);
      else if (item.Stock !== figure.published || (erp.price !== undefined && item.Price !== erp.price)) {
        const sales = held.map((r) => `${r.quantity}@site${r.siteId}`).join(' ');
        wrong.push(`${code} site ${figure.siteId} Stock ${item.Stock} Price ${item.Price}, expected ${figure.published} (ERP ${erp.stock} Price ${erp.price}, reserved ${sales || 'none'})`);
      }
    }
  }
  return wrong;
}

/** Each site ends with its figure of the allocation, every copy with the stock rows' default price. */
export function checkSiteValues(
  sim: Simulator,
  layout: SiteLayout,
  input: { model: ErpModel; diff: DiffTruth; deletions: number; salesBySite: ReadonlyMap<number, number> },
): CheckResult {
  const { model, diff, deletions, salesBySite } = input;
  const wrong = siteValueMismatches(sim, layout, model, diff);
  const sales = layout.sites.map((site) => `${salesBySite.get(site.siteId) ?? 0} on site ${site.siteId}`).join(', ');
  // What the check is for: sales on every site, and rows deleted from the table without a change column.
  const exercised = layout.sites.every((site) => (salesBySite.get(site.siteId) ?? 0) > 0) && deletions > 0;
  return {
    name:
      `targets: each site ends with its ${layout.allocation} figure of the ERP's latest stock less the open sales' reservations, ` +
      `and the default price (${model.latest.size + diff.present.size + diff.absent.length} SKUs × ${layout.sites.length} sites, ` +
      `${deletions} table rows deleted, ${diff.absent.length} absent at the end; sales ${sales})`,
    ok: wrong.length === 0 && exercised,
    detail: wrong.length > 0 ? sample(wrong) : exercised ? 'all equal' : 'all equal, but a site had no sale or no table row was deleted',
  };
}

/** Each list's price of every SKU against the ERP's latest row of that list (no row: the store's initial price). */
export function listPriceMismatches(sim: Simulator, skus: readonly string[], truth: PriceTruth): string[] {
  const wrong: string[] = [];
  for (const list of PRICE_LISTS) {
    for (const code of skus) {
      const want = truth.get(list.code)?.get(code) ?? INITIAL_PRICE;
      const price = sim.state.prices?.priceOf(list.id, code)?.Price;
      if (price !== want) wrong.push(`${code} list ${list.code} Price ${price}, ERP ${want}`);
    }
  }
  return wrong;
}

/** The lists end as `tabItem Price` says. */
export function checkListPrices(sim: Simulator, skus: readonly string[], truth: PriceTruth, rows: number): CheckResult {
  const wrong = listPriceMismatches(sim, skus, truth);
  const named = PRICE_LISTS.map((list) => `${list.id}:${list.code}`).join(', ');
  return {
    name: `price lists: each list (${named}) ends with the ERP's latest price of every SKU (${skus.length} SKUs, ${rows} tabItem Price rows saved)`,
    ok: wrong.length === 0 && rows > 0,
    detail: wrong.length === 0 ? 'all equal' : sample(wrong),
  };
}

/**
 * Per target, no write carried an older version than one already written there (a price encodes its
 * version: `priceOf` for the default list, `listPriceOf` for a list), and no Stock was above its site's
 * figure of that version without reservations. A list's write names a list of the ERP and carries its
 * price only (no Stock, never the default list); every write names a site of `inventory.sites`.
 */
export function checkNoStaleTargetWrites(sim: Simulator, layout: SiteLayout): CheckResult {
  const highest = new Map<string, number>();
  const sites = new Set(layout.sites.map((site) => site.siteId));
  const bad: string[] = [];
  let writes = 0;
  for (const write of sim.writes) {
    writes += 1;
    const { SiteId: siteId, PriceListId: listId, PriceListCode: listCode, Stock: stock, Price: price } = write.fields;
    const at = `(seq ${write.seq})`;
    if (typeof siteId !== 'number' || !sites.has(siteId)) {
      bad.push(`${write.code} written to SiteId ${String(siteId)}, not a site of inventory.sites ${at}`);
      continue;
    }
    const list = PRICE_LISTS.find((one) => one.id === listId);
    if (listId !== undefined && (!list || list.code !== listCode)) bad.push(`${write.code} written to list ${String(listId)}/${String(listCode)}, not a list of the ERP ${at}`);
    if (list && stock !== undefined) bad.push(`${write.code} Stock ${String(stock)} written with list ${list.code}'s price ${at}`);
    const target = `${write.code} (site ${siteId}${list ? `, list ${list.code}` : ''})`;
    const seen = highest.get(target) ?? 0;
    let version = seen;
    if (typeof price === 'number' && price !== INITIAL_PRICE) {
      version = list ? listVersionOf(list.id, price) : versionOf(price);
      if (version < seen) bad.push(`${target} Price of version ${version} written after version ${seen} ${at}`);
    }
    if (typeof stock === 'number') {
      const bound = expected(layout, version, []).sites.find((site) => site.siteId === siteId)?.published ?? 0;
      if (stock > bound) bad.push(`${target} Stock ${stock} above the site's figure ${bound} of ERP version ${version} ${at}`);
    }
    highest.set(target, Math.max(seen, version));
  }
  return {
    name: `targets: no write to a (Code, SiteId, price list) replaced a newer version with an older one or published more than its site's figure (${writes} writes)`,
    ok: bad.length === 0,
    detail: bad.length === 0 ? 'versions only went up per target; every Stock within its figure; list writes carried their price only' : sample(bad),
  };
}

/**
 * `split`: the sites together end at most at `ERP − all reservations` per Code (the allocation's
 * promise: no oversell across sites). `shared`: no site above that figure.
 */
export function checkSitesWithinSellable(sim: Simulator, layout: SiteLayout, model: ErpModel, diff: DiffTruth): CheckResult {
  const reservations = reservationsByCode(sim);
  const over: string[] = [];
  for (const [code, erp] of erpFigures(model, diff)) {
    const reserved = Math.ceil((reservations.get(code) ?? []).reduce((sum, r) => sum + r.quantity, 0));
    const sellable = Math.max(0, erp.stock - reserved);
    const shown = layout.sites.map((site) => sim.state.itemOn(code, site.siteId)?.item.Stock ?? 0);
    const total = layout.allocation === 'split' ? shown.reduce((sum, n) => sum + n, 0) : Math.max(...shown);
    if (total > sellable) over.push(`${code} sites show ${shown.join(' + ')}, ERP ${erp.stock} less ${reserved} reserved is ${sellable}`);
  }
  return {
    name:
      layout.allocation === 'split'
        ? "targets (split): the sites' figures add up to at most the ERP's stock less every reservation, per SKU"
        : "targets (shared): no site shows more than the ERP's stock less every reservation, per SKU",
    ok: over.length === 0,
    detail: over.length === 0 ? 'within, every SKU' : sample(over),
  };
}
