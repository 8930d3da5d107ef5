/** Inventory items: defaults for new items and seeded generation (parents with variants, several sites). */
import type { Random } from './random.js';
import type { ItemInput, KeyValue, SimItem } from './types.js';
import { BRANDS, COLORS, MATERIALS, PRICE_LISTS, PRODUCTS, QUALIFIERS, WAREHOUSES } from './vocabulary.js';

/** What the store knows about an item beyond the API fields (shown through products and preferences). */
export interface ItemMeta {
  createdAtMs: number;
  brand: string;
  category: string;
  /** Returned as `Preferences` when the query asks for `includePreferences=true`. */
  preferences: KeyValue[];
}

/** An item with its metadata. */
export interface StoredItem {
  item: SimItem;
  meta: ItemMeta;
}

/** Formats the n-th item code: `SKU-000001`. */
export function itemCode(n: number): string {
  return `SKU-${String(n).padStart(6, '0')}`;
}

/** The values optional fields take when an item is created without them. */
export function defaultItem(code: string, id: number): SimItem {
  return {
    InternalId: id,
    Code: code,
    Stock: 0,
    Price: 0,
    OfferPrice: 0,
    Taxes: 21,
    ForSale: false,
    Published: false,
    IsItem: true,
    ParentItemId: null,
    ParentItemCode: null,
    PriceListId: 1,
    PriceListCode: null,
    PriceMode: 0,
    PrecioOriginal: '0.00',
    DepStock: '',
    Properties: [],
    Name: code,
    Code2: '',
    ExternalReference: '',
    SiteId: 1,
    ExtendedWarranty: [],
  };
}

/** Builds a stored item from an input, filling defaults; the input's InternalId is ignored. */
export function buildItem(input: ItemInput, id: number, createdAtMs: number): StoredItem {
  const { InternalId: _ignored, ...fields } = input;
  return {
    item: { ...defaultItem(input.Code, id), ...fields },
    meta: { createdAtMs, brand: '', category: '', preferences: [] },
  };
}

const DAY_MS = 86_400_000;

function weightedSite(rng: Random): number {
  const r = rng.next();
  return r < 0.7 ? 1 : r < 0.9 ? 2 : 3;
}

/** Generates `count` items with codes SKU-000001..; about a fifth are parents followed by their variants. */
export function generateItems(rng: Random, count: number, baseTime: number): StoredItem[] {
  const out: StoredItem[] = [];
  while (out.length < count) {
    const id = out.length + 1;
    const product = rng.pick(PRODUCTS);
    const brand = rng.pick(BRANDS);
    const name = `${product.noun} ${rng.pick(QUALIFIERS)} ${brand}`;
    const price = rng.money(900, 180_000);
    const offer = Math.round(price * (1 + rng.int(5, 35) / 100) * 100) / 100;
    const priceList = rng.pick(PRICE_LISTS);
    const parent: SimItem = {
      ...defaultItem(itemCode(id), id),
      Stock: rng.chance(0.08) ? 0 : rng.int(1, 500),
      Price: price,
      OfferPrice: offer,
      Taxes: rng.pick([21, 21, 21, 10.5, 27]),
      ForSale: rng.chance(0.92),
      Published: rng.chance(0.85),
      PriceListId: priceList.id,
      PriceListCode: priceList.code,
      PrecioOriginal: offer.toFixed(2),
      DepStock: rng.pick(WAREHOUSES),
      Properties: [
        { Key: 'Marca', Value: brand },
        { Key: 'Material', Value: rng.pick(MATERIALS) },
      ],
      Name: name,
      Code2: `779${rng.digits(10)}`,
      ExternalReference: `ERP-${String(id).padStart(7, '0')}`,
      SiteId: weightedSite(rng),
      ExtendedWarranty:
        product.category === 'Electrónica'
          ? [{ Name: 'Garantía extendida 12 meses', Price: Math.round(price * 0.1 * 100) / 100, Active: true, Cant: 100, Code: 'GAR-12' }]
          : [],
    };
    const meta = (): ItemMeta => ({
      createdAtMs: baseTime - rng.int(1, 720) * DAY_MS + rng.int(0, DAY_MS - 1),
      brand,
      category: product.category,
      preferences: [
        { Key: 'MinimoCompra', Value: String(rng.pick([1, 1, 1, 2, 6])) },
        { Key: 'MostrarStock', Value: String(rng.chance(0.5)) },
      ],
    });
    out.push({ item: parent, meta: meta() });
    const room = count - out.length;
    if (product.sizes.length === 0 || room === 0 || !rng.chance(0.25)) continue;
    const color = rng.pick(COLORS);
    for (const size of product.sizes.slice(0, Math.min(room, rng.int(2, 4)))) {
      const variantId = out.length + 1;
      out.push({
        item: {
          ...parent,
          InternalId: variantId,
          Code: itemCode(variantId),
          Stock: rng.int(0, 120),
          IsItem: false,
          ParentItemId: parent.InternalId,
          ParentItemCode: parent.Code,
          Name: `${name} - ${color} ${size}`,
          Properties: [
            { Key: 'Color', Value: color },
            { Key: 'Talle', Value: size },
          ],
          Code2: `779${rng.digits(10)}`,
          ExternalReference: `ERP-${String(variantId).padStart(7, '0')}`,
          ExtendedWarranty: parent.ExtendedWarranty.map((w) => ({ ...w })),
        },
        meta: meta(),
      });
    }
  }
  return out;
}
