/**
 * Everything the simulated store holds: items, sales, users, clients, issued hashes and the logs of
 * accepted writes. Routes and the programmatic API change it through these methods.
 */
import { generateClients, generateUsers, type StoredUser } from './account-generator.js';
import { parseStoreDate } from './clock.js';
import { HttpError } from './http.js';
import { buildItem, generateItems, type StoredItem } from './items.js';
import { PriceBook, type PriceList } from './price-lists.js';
import { Random } from './random.js';
import { generateSale, type SaleContext, type StoredSale } from './sale-generator.js';
import { SiteItems } from './site-items.js';
import type { Client, ItemInput, Sale, SaleItem, SimItem } from './types.js';

/** What the store is seeded with. */
export interface SeedSettings {
  items: number | readonly ItemInput[];
  sales: number;
  users: number;
  clients: number;
  seed: number;
  /** Generated dates lie before this instant. */
  baseTime: number;
  timeZone: string;
  /** Most write-log entries kept (oldest dropped first). */
  maxWrites: number;
  /** Items per site: the site ids every item is held on, each with its own copy (`site-items.ts`). */
  itemsPerSite?: readonly number[];
  /** Price lists, each with its own prices for every item (`price-lists.ts`). */
  priceLists?: readonly PriceList[];
}

/** An accepted inventory write: the fields as sent, after validation. */
export interface InventoryWrite {
  seq: number;
  /** Epoch milliseconds. */
  at: number;
  code: string;
  /** `update` for PUT, `create` for POST. */
  op: 'update' | 'create';
  fields: Record<string, unknown>;
}

/** An accepted sale update: the updatable fields as sent. */
export interface SaleUpdateEntry {
  seq: number;
  at: number;
  saleId: number;
  fields: Record<string, unknown>;
}

/** Nested objects of a sale that a partial input merges into the generated ones. */
type NestedSaleField = 'UserData' | 'BillingAddress' | 'ShippingAddress' | 'PayMethod' | 'Currency' | 'ShippingMethod';
const NESTED: readonly NestedSaleField[] = ['UserData', 'BillingAddress', 'ShippingAddress', 'PayMethod', 'Currency', 'ShippingMethod'];

/** A sale to add: any sale field; nested objects may be partial; lines may name only `Code` and `Quantity`. */
export type SaleInput = Partial<Omit<Sale, 'Items' | NestedSaleField>> & {
  [K in NestedSaleField]?: Partial<Sale[K]>;
} & { Items?: ReadonlyArray<Partial<SaleItem>> };

const DAY_MS = 86_400_000;
const referenceKey = (sale: Sale): string => `${sale.SiteId}|${sale.ExternalReference}`;
const round2 = (n: number): number => Math.round(n * 100) / 100;

/** The simulated store's data. */
export class SimulatorState {
  readonly items = new Map<string, StoredItem>();
  /** Sales in ascending Id order. */
  readonly sales: StoredSale[] = [];
  readonly salesById = new Map<number, StoredSale>();
  /** `SiteId|ExternalReference` → sale: the reference is unique per site. */
  readonly salesByReference = new Map<string, StoredSale>();
  readonly users = new Map<number, StoredUser>();
  readonly clients = new Map<number, Client>();
  /** Issued hashes → issue time (epoch ms). */
  readonly hashes = new Map<string, number>();
  writes: InventoryWrite[] = [];
  saleUpdates: SaleUpdateEntry[] = [];
  readonly settings: SeedSettings;
  /** Each site's copy of every item, when `itemsPerSite` is set. */
  readonly siteItems: SiteItems | undefined;
  /** Each price list's prices, when `priceLists` is set. */
  readonly prices: PriceBook | undefined;
  #codes: string[] = [];
  #seq = 0;
  #nextItemId = 1;
  #nextSaleId = 1;
  #nextLineId = 1;
  #nextUserId = 1;
  #nextClientId = 1;
  /** Draws of sales added at run time; set by `reseed`. */
  #rng = new Random(0);

  constructor(settings: SeedSettings) {
    this.settings = settings;
    this.siteItems = settings.itemsPerSite ? new SiteItems(settings.itemsPerSite) : undefined;
    this.prices = settings.priceLists ? new PriceBook(settings.priceLists) : undefined;
    this.reseed();
  }

  /** Drops everything and regenerates the seeded data. */
  reseed(): void {
    const s = this.settings;
    const rng = new Random(s.seed);
    this.hashes.clear();
    this.writes = [];
    this.saleUpdates = [];
    this.#seq = 0;
    if (typeof s.items === 'number') this.#replaceItems(generateItems(rng, s.items, s.baseTime), true);
    else this.setItems(s.items);
    this.users.clear();
    for (const u of generateUsers(rng, s.users, s.baseTime, s.timeZone)) this.users.set(u.user.Id, u);
    // Price lists: users and clients carry one of the store's lists (the n-th generated id → the n-th list).
    const lists = this.prices?.lists;
    const listOf = (id: number): number => (lists ? (lists[(id - 1) % lists.length] as { id: number }).id : id);
    for (const { user } of this.users.values()) user.PriceListId = listOf(user.PriceListId);
    this.#nextUserId = s.users + 1;
    this.clients.clear();
    for (const c of generateClients(rng, s.clients, s.baseTime, s.timeZone)) this.clients.set(c.Id, { ...c, PriceListId: listOf(c.PriceListId) });
    this.#nextClientId = s.clients + 1;
    this.sales.length = 0;
    this.salesById.clear();
    this.salesByReference.clear();
    this.#nextLineId = 1;
    const times = Array.from({ length: s.sales }, () => s.baseTime - rng.int(1, 30 * DAY_MS)).sort((a, b) => a - b);
    const ctx = this.#saleContext(rng);
    times.forEach((t, i) => this.#insertSale(generateSale(ctx, i + 1, t)));
    this.#nextSaleId = s.sales + 1;
    // Sales added at run time draw from their own stream, so the seeded data never depends on them.
    this.#rng = new Random(s.seed ^ 0x5eed);
  }

  /**
   * Replaces all items (ids 1..n in order). A variant naming only its ParentItemCode gets the parent's id.
   * Throws HttpError 400 on a repeated Code.
   */
  setItems(inputs: readonly ItemInput[]): void {
    const stored = inputs.map((input, i) => buildItem(input, i + 1, this.settings.baseTime));
    const byCode = new Map<string, SimItem>();
    for (const { item } of stored) {
      if (byCode.has(item.Code)) throw new HttpError(400, `duplicate Code in the item list: ${item.Code}`);
      byCode.set(item.Code, item);
    }
    inputs.forEach((input, i) => {
      const item = stored[i]?.item;
      if (item && input.ParentItemId === undefined && input.ParentItemCode) {
        item.ParentItemId = byCode.get(input.ParentItemCode)?.InternalId ?? null;
      }
    });
    this.#replaceItems(stored);
  }

  /**
   * Creates or partially updates an item by Code, as the API's PUT does (`updateItem`); returns the
   * changed item. Throws HttpError 400 on a site or price list the store does not have.
   */
  upsertItem(input: ItemInput): SimItem {
    if (!this.items.has(input.Code)) return this.createItem(input);
    const { InternalId: _ignored, Code: _code, ...fields } = input;
    const item = this.updateItem(input.Code, fields);
    if (!item) throw new HttpError(400, `SiteId ${String(input.SiteId)} of ${input.Code} is not a site of the simulator (${this.siteItems?.sites.join(', ')})`);
    return item;
  }

  /**
   * Applies an update of item `code` as the API's PUT does. Items per site: to the copy on the site
   * `SiteId` names (the first site when none). Price lists: `Price` and `OfferPrice` go to the list
   * `PriceListId`/`PriceListCode` names (the default list when none), the other fields to the item.
   * Returns undefined when the item, or its copy on that site, does not exist; throws HttpError 400
   * (and changes nothing) on an unknown price list.
   */
  updateItem(code: string, fields: Partial<SimItem>): SimItem | undefined {
    const { SiteId, ...rest } = fields;
    const target = this.itemOn(code, SiteId);
    if (!target) return undefined;
    if (!this.siteItems && SiteId !== undefined) target.item.SiteId = SiteId;
    if (this.prices) {
      const { PriceListId, PriceListCode, Price, OfferPrice, ...others } = rest;
      const list = this.prices.listOfWrite(code, PriceListId, PriceListCode);
      const prices = { ...(Price === undefined ? {} : { Price }), ...(OfferPrice === undefined ? {} : { OfferPrice }) };
      this.prices.set(list.id, code, prices);
      // The item's own prices are the default list's (products and sale lines read them).
      if (list === this.prices.defaultList) for (const copy of this.siteItems?.copiesOf(code) ?? [target]) Object.assign(copy.item, prices);
      Object.assign(target.item, others);
    } else Object.assign(target.item, rest);
    return target.item;
  }

  /**
   * Creates an item; the caller has checked that Code is new. Items per site: held on every site (a
   * `SiteId` given is not kept). Price lists: priced at its `Price`/`OfferPrice` on every list; an
   * unknown list named throws HttpError 400 before anything is created.
   */
  createItem(input: ItemInput, now = Date.now()): SimItem {
    // Only checked: the item is priced on every list alike.
    this.prices?.listOfWrite(input.Code, input.PriceListId, input.PriceListCode);
    const defaultList = this.prices?.defaultList;
    const stored = buildItem(input, this.#nextItemId, now);
    if (defaultList) Object.assign(stored.item, { PriceListId: defaultList.id, PriceListCode: defaultList.code });
    this.#nextItemId += 1;
    this.items.set(stored.item.Code, stored);
    this.#codes.push(stored.item.Code);
    this.siteItems?.add(stored);
    this.prices?.add(stored.item, false);
    return stored.item;
  }

  /** Item `code`; items per site: its copy on `site` (the first site when undefined), else `site` is ignored. */
  itemOn(code: string, site?: number): StoredItem | undefined {
    return this.siteItems ? this.siteItems.on(site ?? this.siteItems.defaultSite, code) : this.items.get(code);
  }

  /** The items a query reads: on `site` (items per site), or every site's copies; `code` narrows to one item. */
  heldItems(site: number | undefined, code?: string): Iterable<StoredItem> {
    if (this.siteItems) {
      if (code === undefined) return this.siteItems.held(site);
      return this.siteItems.copiesOf(code).filter((s) => site === undefined || s.item.SiteId === site);
    }
    if (code === undefined) return this.items.values();
    const stored = this.items.get(code);
    return stored ? [stored] : [];
  }

  /** Appends an accepted inventory write to the log. */
  logWrite(code: string, op: InventoryWrite['op'], fields: Record<string, unknown>, at: number): InventoryWrite {
    const entry: InventoryWrite = { seq: ++this.#seq, at, code, op, fields };
    this.writes.push(entry);
    if (this.writes.length > this.settings.maxWrites) this.writes.splice(0, this.writes.length - this.settings.maxWrites);
    return entry;
  }

  /** Appends an accepted sale update to the log. */
  logSaleUpdate(saleId: number, fields: Record<string, unknown>, at: number): SaleUpdateEntry {
    const entry: SaleUpdateEntry = { seq: ++this.#seq, at, saleId, fields };
    this.saleUpdates.push(entry);
    if (this.saleUpdates.length > this.settings.maxWrites) {
      this.saleUpdates.splice(0, this.saleUpdates.length - this.settings.maxWrites);
    }
    return entry;
  }

  /**
   * Adds a sale: generated, then overlaid with `input`. Lines naming a known `Code` take its id, name and
   * price; Total is recomputed from the lines unless given. Throws HttpError 409 on a duplicate Id or
   * ExternalReference (per site), 400 on an unreadable CreationDate.
   */
  addSale(input: SaleInput, now: number): Sale {
    const id = input.Id ?? this.#nextSaleId;
    if (this.salesById.has(id)) throw new HttpError(409, `sale ${id} already exists`);
    let createdAtMs = now;
    if (input.CreationDate !== undefined) {
      const parsed = parseStoreDate(input.CreationDate, this.settings.timeZone);
      if (parsed === undefined) throw new HttpError(400, `CreationDate must be MM/DD/YYYY HH:MM:SS (got ${input.CreationDate})`);
      createdAtMs = parsed;
    }
    const generated = generateSale(this.#saleContext(this.#rng), id, createdAtMs).sale;
    const { Items: lines, ...rest } = input;
    const sale = { ...generated, ...rest, Id: id } as Sale;
    for (const field of NESTED) Object.assign(sale, { [field]: { ...generated[field], ...input[field] } });
    if (input.ExternalReference === undefined) sale.ExternalReference = `WEB-${sale.SiteId}-${String(id).padStart(7, '0')}`;
    if (input.UserData) {
      // The search helper fields follow the customer unless given.
      const u = sale.UserData;
      sale.SearchFirstLastName = input.SearchFirstLastName ?? `${u.FirstName} ${u.LastName}`;
      sale.SearchEmail = input.SearchEmail ?? u.EMail;
      sale.SearchPhone = input.SearchPhone ?? u.Phone.replace(/\D/g, '');
      sale.SearchPostalCode = input.SearchPostalCode ?? u.PostalCode;
    }
    if (lines) {
      sale.Items = lines.map((line) => this.#saleLine(line, generated, id));
      if (input.Total === undefined) {
        sale.Total = round2(sale.Items.reduce((sum, l) => sum + l.Price * l.Quantity, 0) + sale.ShippingCost - sale.Discount);
      }
    }
    if (this.salesByReference.has(referenceKey(sale))) throw new HttpError(409, `ExternalReference ${sale.ExternalReference} already used on site ${sale.SiteId}`);
    this.#insertSale({ sale, createdAtMs });
    // As a hosted store does: a placed sale takes its units off the shelf at once.
    if (sale.Status >= 0) this.#moveStock(sale, -1);
    this.#nextSaleId = Math.max(this.#nextSaleId, id + 1);
    return sale;
  }

  /**
   * Applies a sale update's status change to the stock as a hosted store does: a sale cancelled or
   * rejected (a negative status) gives its units back; one taken back out of it takes them again.
   */
  changeSaleStatus(sale: Sale, previousStatus: number): void {
    if (previousStatus >= 0 && sale.Status < 0) this.#moveStock(sale, 1);
    else if (previousStatus < 0 && sale.Status >= 0) this.#moveStock(sale, -1);
  }

  #moveStock(sale: Sale, sign: 1 | -1): void {
    for (const line of sale.Items) {
      // Items per site: the sale takes from its own site's copy (none when the site does not hold it).
      const item = this.itemOn(line.Code, sale.SiteId)?.item;
      if (!item || !(line.Quantity > 0)) continue;
      item.Stock = Math.max(0, item.Stock + sign * line.Quantity);
    }
  }

  /** Next user id. */
  nextUserId(): number {
    return this.#nextUserId++;
  }

  /** Next client id. */
  nextClientId(): number {
    return this.#nextClientId++;
  }

  #saleLine(line: Partial<SaleItem>, generated: Sale, saleId: number): SaleItem {
    const template = generated.Items[0];
    const known = line.Code === undefined ? undefined : this.items.get(line.Code)?.item;
    const base: SaleItem = {
      Id: this.#nextLineId++,
      ItemId: known?.InternalId ?? 0,
      Code: known?.Code ?? '',
      PriceCode: known?.PriceListCode ?? 'MINORISTA',
      PriceId: known?.PriceListId ?? 1,
      Price: known?.Price ?? 0,
      Quantity: 1,
      SaleId: saleId,
      CurrencyId: 1,
      IsItem: true,
      Name: known?.Name ?? '',
      ReferenceId: 0,
      SaleItemType: 0,
      Currency: template?.Currency ?? generated.Currency,
      IsCombo: false,
      ProviderId: 0,
      Preferences: {},
    };
    return { ...base, ...line, SaleId: saleId };
  }

  #insertSale(stored: StoredSale): void {
    const last = this.sales.at(-1);
    if (last === undefined || last.sale.Id < stored.sale.Id) this.sales.push(stored);
    else {
      this.sales.push(stored);
      this.sales.sort((a, b) => a.sale.Id - b.sale.Id);
    }
    this.salesById.set(stored.sale.Id, stored);
    this.salesByReference.set(referenceKey(stored.sale), stored);
  }

  /** `seeded`: generated items, whose copies and lists draw their own stock and prices. */
  #replaceItems(stored: readonly StoredItem[], seeded = false): void {
    const defaultList = this.prices?.defaultList;
    if (defaultList) for (const { item } of stored) Object.assign(item, { PriceListId: defaultList.id, PriceListCode: defaultList.code });
    this.siteItems?.rebuild(stored, seeded ? this.settings.seed : undefined);
    this.prices?.rebuild(stored.map((s) => s.item), seeded);
    this.items.clear();
    for (const s of stored) this.items.set(s.item.Code, s);
    this.#codes = stored.map((s) => s.item.Code);
    this.#nextItemId = stored.reduce((max, s) => Math.max(max, s.item.InternalId), 0) + 1;
  }

  #saleContext(rng: Random): SaleContext {
    return {
      rng,
      timeZone: this.settings.timeZone,
      pickItem: () => (this.#codes.length === 0 ? undefined : this.items.get(rng.pick(this.#codes))?.item),
      users: [...this.users.values()],
      nextLineId: () => this.#nextLineId++,
    };
  }
}
