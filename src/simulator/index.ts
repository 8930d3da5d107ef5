/**
 * An in-memory store that implements the whole back-office API over real HTTP, with seeded data, fault
 * injection, counters, a write log and a control API (`/__control/`). Tests start it on a random port;
 * `storesync simulator` runs it standalone.
 */
import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { formatIssue } from '../errors.js';
import { TypedEmitter } from '../events.js';
import { Counters, type CounterSnapshot, type RequestLogEntry } from './counters.js';
import { DEFAULT_FAULTS, Faults, type FaultSettings } from './faults.js';
import type { PriceList } from './price-lists.js';
import { Router } from './router.js';
import { authRoutes } from './routes/auth.js';
import { clientRoutes } from './routes/clients.js';
import type { SimContext, SimulatorEvents } from './routes/context.js';
import { controlRoutes } from './routes/control.js';
import { inventoryRoutes } from './routes/inventory.js';
import { productRoutes } from './routes/products.js';
import { saleRoutes } from './routes/sales.js';
import { userRoutes } from './routes/users.js';
import { createHandler } from './server.js';
import { type InventoryWrite, type SaleInput, type SaleUpdateEntry, SimulatorState } from './state.js';
import type { ItemInput, Sale, SimItem } from './types.js';
import { inventoryIssues } from './validation.js';

export type { CounterSnapshot, RequestLogEntry } from './counters.js';
export type { FaultSettings } from './faults.js';
export { VARIANCE_PROFILE } from './faults.js';
export type { ListPrice, PriceList } from './price-lists.js';
export type { SimulatorEvents } from './routes/context.js';
export type { InventoryWrite, SaleInput, SaleUpdateEntry, SimulatorState } from './state.js';
export type { Client, ItemInput, Product, Sale, SaleItem, SimItem, User } from './types.js';

/** Options of `startSimulator`; every one has a default. */
export interface SimulatorOptions extends Partial<FaultSettings> {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** @defaultValue '127.0.0.1' */
  host?: string;
  /** How many items to generate (codes SKU-000001...), or the exact items to hold. @defaultValue 200 */
  items?: number | readonly ItemInput[];
  /** @defaultValue 50 */
  sales?: number;
  /** @defaultValue 20 */
  users?: number;
  /** @defaultValue 10 */
  clients?: number;
  /** Seed of the generated data: the same seed and baseTime give the same data. @defaultValue 1 */
  seed?: number;
  /** Generated dates lie before this instant (epoch ms). @defaultValue the start of the current UTC day */
  baseTime?: number;
  /** Time zone of the dates the store writes. @defaultValue 'America/Argentina/Buenos_Aires' */
  timeZone?: string;
  /** @defaultValue 'demo' */
  username?: string;
  /** @defaultValue 'demo-password' */
  password?: string;
  /** Site id of the authentication answer. @defaultValue 1 */
  site?: number;
  /** Path of item creation (POST), as a store may place it (`store.inventoryCreatePath`). @defaultValue '/Api/Inventory' */
  inventoryCreatePath?: string;
  /**
   * Items per site, the spec's `SiteId` read as one copy per site: every item is held on each of these
   * sites with its own stock, flags and fields. A PUT with `SiteId` changes that site's copy, a query
   * with `siteId` reads it; without them, the first site. @defaultValue off (one record per Code)
   */
  itemsPerSite?: readonly number[];
  /**
   * Price lists holding their own `Price`/`OfferPrice` for every item: a PUT with `PriceListId` or
   * `PriceListCode` changes that list only, a query with `pricelistId` answers that list's prices; the
   * first list is the default. @defaultValue off (one price per item, `pricelistId` filters)
   */
  priceLists?: readonly PriceList[];
  /** Most entries kept in each write log. @defaultValue unbounded */
  maxWrites?: number;
  /** Clock (epoch ms), for tests of hash expiry. @defaultValue Date.now */
  now?: () => number;
}

/** A running simulator. */
export interface Simulator {
  /** `http://host:port`: the store's base URL (without /Api). */
  readonly url: string;
  readonly port: number;
  /** The data the store holds. */
  readonly state: SimulatorState;
  /** Live fault settings: `faults.set({failRate: 1})`. */
  readonly faults: Faults;
  /** Accepted inventory writes and sale updates, as they happen. */
  readonly events: TypedEmitter<SimulatorEvents>;
  /** Accepted inventory writes, oldest first. */
  readonly writes: readonly InventoryWrite[];
  /** Accepted sale updates, oldest first. */
  readonly saleUpdates: readonly SaleUpdateEntry[];
  /** A snapshot of the request counters. */
  counters(): CounterSnapshot;
  /** Sets the request counters back to zero (and empties the request log). */
  resetCounters(): void;
  /** The latest API requests with their arrival time (simulator clock), oldest first. */
  requestLog(): readonly RequestLogEntry[];
  /** Adds a sale (generated, overlaid with `partial`) created now, and returns it. */
  addSale(partial?: SaleInput): Sale;
  /** Replaces every item. */
  setItems(items: readonly ItemInput[]): void;
  /** Creates an item or updates the fields given; throws on an invalid field. */
  upsertItem(item: ItemInput): SimItem;
  /** Makes every issued hash invalid now; returns how many there were. */
  expireHashes(): number;
  /** Back to the seeded data and the starting faults; logs, counters and hashes cleared. */
  reset(): void;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;

function checkItems(items: readonly ItemInput[]): void {
  const issues = items.flatMap((item) => inventoryIssues(item, 'control'));
  if (issues.length > 0) throw new Error(`invalid simulator items: ${issues.slice(0, 10).map(formatIssue).join('; ')}`);
}

/** Starts a simulator and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const now = options.now ?? Date.now;
  const host = options.host ?? '127.0.0.1';
  if (Array.isArray(options.items)) checkItems(options.items);
  const state = new SimulatorState({
    items: options.items ?? 200,
    sales: options.sales ?? 50,
    users: options.users ?? 20,
    clients: options.clients ?? 10,
    seed: options.seed ?? 1,
    baseTime: options.baseTime ?? Math.floor(now() / DAY_MS) * DAY_MS,
    timeZone: options.timeZone ?? 'America/Argentina/Buenos_Aires',
    maxWrites: options.maxWrites ?? Number.POSITIVE_INFINITY,
    ...(options.itemsPerSite ? { itemsPerSite: options.itemsPerSite } : {}),
    ...(options.priceLists ? { priceLists: options.priceLists } : {}),
  });
  const initialFaults: FaultSettings = { ...DEFAULT_FAULTS };
  for (const key of Object.keys(DEFAULT_FAULTS) as Array<keyof FaultSettings>) {
    if (options[key] !== undefined) Object.assign(initialFaults, { [key]: options[key] });
  }
  const faults = new Faults(initialFaults, options.seed ?? 1);
  const counters = new Counters();
  const events = new TypedEmitter<SimulatorEvents>();
  const ctx: SimContext = {
    state,
    faults,
    counters,
    events,
    timeZone: state.settings.timeZone,
    credentials: { username: options.username ?? 'demo', password: options.password ?? 'demo-password' },
    site: options.site ?? 1,
    now,
  };
  const expireHashes = (): number => {
    const count = state.hashes.size;
    state.hashes.clear();
    return count;
  };
  const reset = (): void => {
    state.reseed();
    counters.reset();
    faults.replace(initialFaults);
  };
  const abort = new AbortController();
  // Every delayed response listens on this one signal (to end at close): thousands at a time is normal.
  setMaxListeners(0, abort.signal);
  const api = new Router([
    ...authRoutes(ctx),
    ...inventoryRoutes(ctx, options.inventoryCreatePath),
    ...productRoutes(ctx),
    ...saleRoutes(ctx),
    ...userRoutes(ctx),
    ...clientRoutes(ctx),
  ]);
  const control = new Router(controlRoutes(ctx, { reset, expireHashes }));
  const server = createServer({ keepAliveTimeout: 60_000 }, createHandler({ ctx, api, control, signal: abort.signal }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    state,
    faults,
    events,
    get writes() {
      return state.writes;
    },
    get saleUpdates() {
      return state.saleUpdates;
    },
    counters: () => counters.snapshot(),
    resetCounters: () => counters.reset(),
    requestLog: () => counters.requestLog(),
    addSale: (partial = {}) => state.addSale(partial, now()),
    setItems: (items) => {
      checkItems(items);
      state.setItems(items);
    },
    upsertItem: (item) => {
      checkItems([item]);
      return state.upsertItem(item);
    },
    expireHashes,
    reset,
    async close() {
      abort.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
