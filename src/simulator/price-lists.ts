/**
 * Price lists (the `priceLists` start option): each list holds its own `Price` and `OfferPrice` for every
 * item. A write naming `PriceListId` or `PriceListCode` changes that list only; a query with `pricelistId`
 * answers that list's prices. The first list is the default one: writes and queries that name no list
 * use it, and the stored item's own `Price`/`OfferPrice` follow it (products and sale lines read those).
 */
import { HttpError } from './http.js';
import type { SimItem } from './types.js';
import { validationFailure } from './validation.js';

/** A price list of the store. */
export interface PriceList {
  id: number;
  code: string;
}

/** The prices one list holds for one item. */
export interface ListPrice {
  Price: number;
  OfferPrice: number;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Throws an Error naming the bad list when `lists` is empty, has a non-positive id, an empty code or a repeat. */
export function checkPriceLists(lists: readonly PriceList[]): void {
  if (lists.length === 0) throw new Error('priceLists: at least one price list is needed');
  const ids = new Set<number>();
  const codes = new Set<string>();
  for (const list of lists) {
    if (!Number.isInteger(list.id) || list.id <= 0) throw new Error(`priceLists: id ${String(list.id)} of ${list.code} must be a positive integer`);
    if (typeof list.code !== 'string' || list.code.trim() === '') throw new Error(`priceLists: list ${list.id} needs a non-empty code`);
    if (ids.has(list.id)) throw new Error(`priceLists: id ${list.id} is repeated`);
    if (codes.has(list.code)) throw new Error(`priceLists: code ${list.code} is repeated`);
    ids.add(list.id);
    codes.add(list.code);
  }
}

/** Every item's price on every list. */
export class PriceBook {
  readonly lists: readonly PriceList[];
  /** List id → item code → price. */
  readonly #prices = new Map<number, Map<string, ListPrice>>();

  constructor(lists: readonly PriceList[]) {
    checkPriceLists(lists);
    this.lists = lists.map((l) => ({ ...l }));
    for (const list of this.lists) this.#prices.set(list.id, new Map());
  }

  /** The default list (the first one). */
  get defaultList(): PriceList {
    return this.lists[0] as PriceList;
  }

  /** Drops every price and prices `items` on every list (`seeded`: see `add`). */
  rebuild(items: Iterable<SimItem>, seeded: boolean): void {
    for (const prices of this.#prices.values()) prices.clear();
    for (const item of items) this.add(item, seeded);
  }

  /**
   * Prices an item on every list at its own prices; a `seeded` (generated) item is priced on the n-th
   * list after the default one 10 % below the list before, so the seeded lists differ.
   */
  add(item: SimItem, seeded: boolean): void {
    this.lists.forEach((list, n) => {
      const factor = seeded ? 0.9 ** n : 1;
      this.#prices.get(list.id)?.set(item.Code, { Price: round2(item.Price * factor), OfferPrice: round2(item.OfferPrice * factor) });
    });
  }

  /** The price of `code` on list `listId`, or undefined. */
  priceOf(listId: number, code: string): ListPrice | undefined {
    return this.#prices.get(listId)?.get(code);
  }

  /** Sets the prices given on one list. */
  set(listId: number, code: string, prices: Partial<ListPrice>): void {
    const current = this.priceOf(listId, code) ?? { Price: 0, OfferPrice: 0 };
    this.#prices.get(listId)?.set(code, { ...current, ...prices });
  }

  /**
   * The list a write names (`PriceListId`, `PriceListCode`, or both agreeing), or the default list when it
   * names none. Throws HttpError 400 naming the field and value when the list is unknown or the two disagree.
   */
  listOfWrite(record: string, id: unknown, code: unknown): PriceList {
    const byId = id === undefined || id === null ? undefined : this.lists.find((l) => l.id === id);
    const byCode = code === undefined || code === null ? undefined : this.lists.find((l) => l.code === code);
    const known = this.#known();
    if (id !== undefined && id !== null && !byId) throw validationFailure([{ record, field: 'PriceListId', value: id, rule: `a price list of the store (${known})` }]);
    if (code !== undefined && code !== null && !byCode) throw validationFailure([{ record, field: 'PriceListCode', value: code, rule: `a price list of the store (${known})` }]);
    if (byId && byCode && byId !== byCode) {
      throw validationFailure([{ record, field: 'PriceListCode', value: code, rule: `the code of PriceListId ${byId.id} (${byId.code})` }]);
    }
    return byId ?? byCode ?? this.defaultList;
  }

  /** The list a query names with `pricelistId`, or the default one. Throws HttpError 400 on an unknown id. */
  listOfQuery(id: number | undefined): PriceList {
    if (id === undefined) return this.defaultList;
    const list = this.lists.find((l) => l.id === id);
    if (!list) throw new HttpError(400, `unknown pricelistId ${id}: the store's price lists are ${this.#known()}`);
    return list;
  }

  /** The item as list `list` shows it: that list's prices, id and code. */
  view(item: SimItem, list: PriceList): SimItem {
    const price = this.priceOf(list.id, item.Code) ?? { Price: item.Price, OfferPrice: item.OfferPrice };
    return { ...item, ...price, PriceListId: list.id, PriceListCode: list.code };
  }

  #known(): string {
    return this.lists.map((l) => `${l.id}:${l.code}`).join(', ');
  }
}
