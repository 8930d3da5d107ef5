/**
 * How records leave the simulator under the variance settings: in the loose types a real service of
 * this kind may send (`looseTypes`), or broken on purpose (`malformedSaleIds`, `malformedItemCodes`).
 * Only responses change; the stored records stay typed. Every choice is a function of the record and
 * the field, so the same request always answers the same body and a test can predict it.
 */
import type { Sale, SimItem, User } from './types.js';

type Loose = Record<string, unknown>;

/** Nested parts of a sale that get loose types too (the rest of a sale's objects are left as they are). */
const SALE_PARTS = ['PayMethod', 'Currency', 'UserData', 'BillingAddress', 'ShippingAddress', 'ShippingMethod'] as const;
/** Item fields of unknown shape (arrays of objects): left as stored so their contents stay comparable. */
const ITEM_OPAQUE = new Set(['Properties', 'ExtendedWarranty', 'Preferences']);

/** A small number in [0, n) chosen by the record and the field. */
function pick(seed: string, n: number): number {
  let hash = 0;
  for (let i = 0; i < seed.length; i++) hash = (hash * 31 + seed.charCodeAt(i)) >>> 0;
  return hash % n;
}

/** One value in a loose type: numbers as text (decimal point or comma), booleans as 0/1 or text, "" as null. */
function loosenValue(value: unknown, seed: string): unknown {
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return pick(seed, 2) === 0 ? String(value) : value;
    const text = value.toFixed(2);
    return pick(seed, 2) === 0 ? text.replace('.', ',') : text;
  }
  if (typeof value === 'boolean') {
    const forms: ReadonlyArray<readonly [unknown, unknown]> = [
      [1, 0],
      ['true', 'false'],
      ['1', '0'],
    ];
    const [yes, no] = forms[pick(seed, forms.length)]!;
    return value ? yes : no;
  }
  if (value === '') return null;
  return value;
}

/** The scalar fields of `record` loosened; nested objects and arrays are left to the caller. */
function loosenScalars(record: object, key: string, skip: ReadonlySet<string> = new Set()): Loose {
  const out: Loose = {};
  for (const [field, value] of Object.entries(record)) {
    out[field] = skip.has(field) || (value !== null && typeof value === 'object') ? value : loosenValue(value, `${key}.${field}`);
  }
  return out;
}

/** A sale as a loosely typing store sends it, with an unknown extra field. */
export function loosenSale(sale: Sale): Loose {
  const key = `sale-${sale.Id}`;
  const out = loosenScalars(sale, key);
  for (const part of SALE_PARTS) {
    const value = sale[part];
    if (value !== null && typeof value === 'object') out[part] = loosenScalars(value, `${key}.${part}`);
  }
  out.Items = sale.Items.map((line, index) => loosenScalars(line, `${key}.Items.${index}`));
  out.ChannelData = { Origin: 'web', Version: 2 };
  return out;
}

/**
 * An item as a loosely typing store sends it: `Taxes` as an object or an array of one (the spec's schema
 * listing types it "null or object"), `DepStock` as an object, scalars loosened, an unknown extra field.
 */
export function loosenItem(item: SimItem): Loose {
  const key = `item-${item.Code}`;
  const out = loosenScalars(item, key, ITEM_OPAQUE);
  // The key stays as stored: a store that sent the Code in another type would break every client.
  out.Code = item.Code;
  const tax = { Name: 'IVA', Value: item.Taxes };
  out.Taxes = pick(`${key}.Taxes`, 2) === 0 ? tax : [tax];
  out.DepStock = item.DepStock === '' ? null : { Code: item.DepStock };
  out.ChannelData = { Origin: 'erp', Version: 2 };
  return out;
}

/** A back-office user as a loosely typing store sends it. */
export function loosenUser(user: User): Loose {
  return { ...loosenScalars(user, `user-${user.Id}`, ITEM_OPAQUE), ChannelData: { Origin: 'backoffice', Version: 2 } };
}

/** A sale whose listing record is malformed: `Total` is an object where a number is expected. */
export function malformSale(record: Loose): Loose {
  return { ...record, Total: { Amount: record.Total } };
}

/** An item whose query record is malformed: `Price` is a word where a number is expected. */
export function malformItem(record: Loose): Loose {
  return { ...record, Price: 'consultar' };
}
