/**
 * A kit's stock in the worker. The ERP keeps none (an ERP stock row for a kit's code is not used): the
 * figure is `min over its components of floor(sellable(component) ÷ quantity)`, where `sellable` is what
 * storesync would publish for the component's own target on the same site (ERP − safety − reservations,
 * the site's part with `inventory.sites`; `published-stock.ts`). A component the ERP does not know, or
 * that vanished, makes the kit 0. The components' state is read in one pipeline per job.
 *
 * A kit's write is versioned by what the store acknowledged, not by ERP versions (the figure has as many
 * inputs as components): it is sent when it differs from the acknowledged figure, when forced, or when
 * the store moved the kit's own stock (a sale or a cancellation of the kit seen as a reservation of its
 * code). Jobs of one target never overlap (its write lock), and each reads the components after taking
 * it: a later job always computes from newer inputs.
 */
import type { Redis } from 'ioredis';

import { type Config, reservationsEnabled } from '../../../../config/schema.js';
import { stateKey } from '../../../../queue/connection.js';
import { closeConnection } from '../../../runtime.js';
import { execOrThrow, type Settlement, type SkuState, stockFiguresKey } from '../../state.js';
import { homeSiteOf, keyOf, stateKeyOf, targetParts } from '../../target-key.js';
import type { PendingEntry } from '../../types.js';
import { placementOf } from '../allocation.js';
import { type Figure, publishedStock, RESERVATION_MOVES_FIELD, SAFETY_FIELD, safetyStockOf, type StockPlan } from '../published-stock.js';
import { parseSkuReservations } from '../reservations.js';
import type { KitCatalog } from './catalog.js';
import { type ComponentFigure, isCycle, kitFigure, type Resolved } from './composition.js';
import type { KitRuntime } from './runtime.js';

/**
 * A kit target's figure and how it was reached (`inventory explain` shows it); or why it has none now: a
 * cycle, or no complete sales pull yet on this prefix (`waitsForFirstSalesPull`).
 */
export type KitStock = { kit: string; siteId?: number } & (
  | { components: ComponentFigure[]; figure: number; limiting?: string }
  | { cycle: readonly string[] }
  | { waiting: 'first sales pull' }
);

/** Set (NX) by the first sales pull that read every site on this prefix (ReservationSync.pulled). */
export function firstSalesPullKey(prefix: string): string {
  return stateKey(prefix, 'sales', 'first-pull');
}

/**
 * Whether kit figures wait for the first complete sales pull of the deployment: when the sales pull is
 * scheduled and reserves. Until that pull, the sales the store already took (a kit sold, or a component
 * alone) are not reserved: a kit computed then would count units they took — the store lowers a sold
 * listing itself, never the other kits that share its components. Without a scheduled, reserving pull
 * nothing would lift the wait: kits are computed at once, as before.
 */
export function waitsForFirstSalesPull(config: Readonly<Config>): boolean {
  return config.sales.sink !== null && config.sales.enabled && reservationsEnabled(config);
}

/**
 * A producer starting takes the first-pull mark back (before any worker of its process starts), so that
 * kits wait for its own first complete pull: the sales the store took while no producer ran (the whole
 * deployment stopped) are not reserved yet, and a kit computed before that pull would count the units
 * they took. With another producer still running, kits only pause until the next pull, which queues them
 * all. A connection is opened (`connect`) only when kits wait at all. Returns whether a mark was taken back.
 */
export async function resetFirstSalesPull(connect: () => Redis, config: Readonly<Config>): Promise<boolean> {
  if (!waitsForFirstSalesPull(config) || config.inventory.kits.length === 0) return false;
  const redis = connect();
  try {
    return (await redis.del(firstSalesPullKey(config.redis.prefix))) === 1;
  } finally {
    await closeConnection(redis);
  }
}

/** The key of a component's target on the kit target's site. */
function componentKey(kitKey: string, component: string): string {
  const { siteId } = targetParts(kitKey);
  return keyOf({ code: component, ...(siteId === undefined ? {} : { siteId }) });
}

/** A stock figure entry from its JSON, when it is a usable stock. */
function figureOf(raw: string | null | undefined): (PendingEntry & { value: number }) | undefined {
  if (!raw) return undefined;
  const entry = JSON.parse(raw) as PendingEntry;
  return typeof entry.value === 'number' && Number.isInteger(entry.value) && entry.value >= 0 ? (entry as PendingEntry & { value: number }) : undefined;
}

/**
 * The kit figures of the stock targets among `keys` (undefined for a key that is no kit's): one round
 * trip finds the kits, one reads every component's ERP figure, safety stock and reservations.
 */
export async function readKitStocks(
  rt: Pick<KitRuntime, 'redis' | 'config'>,
  catalog: KitCatalog,
  keys: readonly string[],
  options: { ungated?: boolean } = {},
): Promise<Map<string, KitStock>> {
  const out = new Map<string, KitStock>();
  const stockKeys = keys.filter((key) => targetParts(key).priceListId === undefined);
  const resolved = await catalog.explodeMany([...new Set(stockKeys.map((key) => targetParts(key).code))]);
  const kitKeys = stockKeys.filter((key) => resolved.has(targetParts(key).code));
  if (kitKeys.length === 0) return out;
  // Before the deployment's first complete sales pull, no kit figure (the pull re-queues every kit).
  if (options.ungated !== true && waitsForFirstSalesPull(rt.config) && (await rt.redis.exists(firstSalesPullKey(rt.config.redis.prefix))) === 0) {
    for (const key of kitKeys) {
      const { code: kit, siteId } = targetParts(key);
      out.set(key, { kit, ...(siteId === undefined ? {} : { siteId }), waiting: 'first sales pull' });
    }
    return out;
  }
  const leavesOf = (key: string): Resolved => resolved.get(targetParts(key).code) ?? [];
  const wanted = [...new Set(kitKeys.flatMap((key) => {
    const leaves = leavesOf(key);
    return isCycle(leaves) ? [] : leaves.map((leaf) => componentKey(key, leaf.code));
  }))];
  const sellable = await readSellable(rt.redis, rt.config, wanted);
  for (const key of kitKeys) {
    const leaves = leavesOf(key);
    const { code: kit, siteId } = targetParts(key);
    const base = { kit, ...(siteId === undefined ? {} : { siteId }) };
    if (isCycle(leaves)) {
      out.set(key, { ...base, cycle: leaves.cycle });
      continue;
    }
    const { figure, limiting, components } = kitFigure(leaves, (code) => sellable.get(componentKey(key, code)));
    out.set(key, { ...base, components, figure, ...(limiting === undefined ? {} : { limiting }) });
  }
  return out;
}

/**
 * What storesync would publish for each component target of `keys` (absent: the ERP has no stock of it):
 * one pipeline of two commands, an HMGET of every target's ERP figure and safety stock from the stock
 * figures hash (`stockFiguresKey`, written by the merge with the targets' state) and an SMISMEMBER of
 * their codes in the set of codes holding reservations; then an HGETALL of the reservations of the codes
 * in it only (once a code: the hash holds every site's, so a component on three sites reads it once). A
 * code out of the set has no reservation entry (`listing/reservations.ts` keeps the set in the scripts
 * that add and remove them), and a component's figure subtracts entries only. So a kit's components
 * cost two commands a job, plus one per component holding reservations.
 */
async function readSellable(redis: Redis, config: KitRuntime['config'], keys: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (keys.length === 0) return out;
  const { prefix } = config.redis;
  const home = homeSiteOf(config);
  const codes = [...new Set(keys.map((key) => targetParts(key).code))];
  const pipeline = redis
    .pipeline()
    .hmget(stockFiguresKey(prefix), ...keys.flatMap((key) => [`Stock:${stateKeyOf(key, home)}`, `${SAFETY_FIELD}:${stateKeyOf(key, home)}`]))
    .smismember(stateKey(prefix, 'inv', 'resskus'), ...codes);
  const results = await execOrThrow(pipeline);
  const [figures, members] = results as [Array<string | null>, number[]];
  const reserved = codes.filter((_, i) => members[i] === 1);
  const reservationsOf = new Map<string, Record<string, string>>();
  if (reserved.length > 0) {
    const reads = redis.pipeline();
    for (const code of reserved) reads.hgetall(stateKey(prefix, 'inv', 'res', code));
    (await execOrThrow(reads)).forEach((hash, i) => reservationsOf.set(reserved[i] as string, hash as Record<string, string>));
  }
  keys.forEach((key, i) => {
    const [stockRaw, safetyRaw] = [figures[2 * i], figures[2 * i + 1]];
    const stock = figureOf(stockRaw);
    if (!stock) return;
    const safety = safetyRaw ? (JSON.parse(safetyRaw) as PendingEntry) : undefined;
    const reservations = parseSkuReservations(reservationsOf.get(targetParts(key).code));
    const figure: Figure = stock;
    out.set(key, publishedStock(stock.value, figure, reservations, safetyStockOf(safety, config.inventory.safetyStock), placementOf(key, config.inventory)).published);
  });
  return out;
}

/**
 * The stock plan of a kit target: the kit's own ERP Stock and SafetyStock are settled unused, and the
 * figure is sent unless the store already acknowledged it (see the module comment). A kit in a cycle,
 * or waiting for the first sales pull, gets no stock write.
 */
export function planKitStock(state: SkuState, stock: KitStock, force: boolean, now: number): StockPlan {
  const settled: Settlement[] = [...state.pending].filter(([field]) => field === 'Stock' || field === SAFETY_FIELD).map(([field, read]) => ({ mode: 'drop', field, read }));
  if ('cycle' in stock || 'waiting' in stock) return { onApplied: [], settled, passed: [] };
  // The store moves a listing itself for the sales placed or cancelled on it: with sites, its own site's.
  const reservations = parseSkuReservations(state.reservations);
  const moves = stock.siteId === undefined ? reservations.moves : (reservations.siteMoves?.get(stock.siteId) ?? 0);
  const storeMoved = moves !== (state.applied.get(RESERVATION_MOVES_FIELD) ?? 0);
  // Version 0: never ahead of an ERP figure, should the code stop being a kit.
  const entry: PendingEntry = { value: stock.figure, version: 0, at: now, source: 'kits' };
  const movesApplied: Settlement = { mode: 'applied', field: RESERVATION_MOVES_FIELD, read: { raw: '', entry: { ...entry, version: moves } } };
  if (!force && !storeMoved && state.acked.get('Stock') === stock.figure) return { onApplied: [], settled, passed: [] };
  return { send: { raw: '', entry }, onApplied: [movesApplied], settled, passed: [] };
}
