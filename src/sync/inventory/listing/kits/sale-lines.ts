/**
 * What a sale of a kit takes (issue 26). The ERP keeps stock of a kit's components only, so a kit
 * line (a code `inventory.kits` composes, whether or not the store marks it `IsCombo`) reserves its
 * components, `ceil(quantity × units sold)` each, and `sales.kits.export: components` hands the ERP one
 * line per component instead of the kit line. Pure functions of a kit catalog: no Redis of their own.
 *
 * The kit's own code is reserved too, with its units: not for its figure (a kit's figure is computed
 * from its components' sellable stock, never from its own reservations; listing/kits/kit-stock.ts) but
 * because the store lowered the kit's listing itself, and a reservation made or released on a code is
 * how the worker learns that the store moved that listing (the `moves` counter, reservations.ts).
 */
import type { Sale, SaleItem } from '../../../../store/schemas/index.js';
import type { KitCatalog } from './catalog.js';
import { isCycle } from './composition.js';

/** The part of the kit catalog a sale needs: the leaf components of each of its codes, in one round trip. */
export type KitExploder = Pick<KitCatalog, 'explodeMany'>;

/** A line the store marks as a combo, or a kit in a cycle, that could not be exploded: reserved as its own code. */
export interface UnresolvedKit {
  code: string;
  reason: string;
}

/** A sale's units per code, and the kit lines that could not be exploded. */
export interface ReservedLines {
  lines: Map<string, number>;
  unresolved: UnresolvedKit[];
}

/** A line as reservations read it: from a store sale, or from an interface table row. */
export interface SoldLine {
  code: string;
  quantity: number;
  /** The store's `IsCombo` (unknown for a table row): only decides whether a missing composition is reported. */
  isCombo?: boolean;
}

/**
 * A product of decimals, cleared of floating-point noise (1.1 × 50 is 55, not 55.00000000000001):
 * compositions and quantities carry a few decimals, never nine.
 */
function product(a: number, b: number): number {
  return Math.round(a * b * 1e9) / 1e9;
}

/** The whole units `quantity` of a component per kit takes when `units` kits are sold: a part unit holds a whole one. */
export function componentUnits(quantity: number, units: number): number {
  return Math.ceil(product(quantity, units));
}

/** The sale lines reservations read: a code and a positive quantity (others hold nothing). */
export function soldLines(sale: Sale): SoldLine[] {
  const out: SoldLine[] = [];
  for (const item of sale.Items ?? []) {
    const code = typeof item.Code === 'string' ? item.Code.trim() : '';
    const quantity = Number(item.Quantity);
    if (code === '' || !(quantity > 0)) continue;
    out.push({ code, quantity, ...(item.IsCombo === true ? { isCombo: true } : {}) });
  }
  return out;
}

/** Units per code, summed over the lines. */
function sumByCode(lines: readonly SoldLine[]): Map<string, { units: number; isCombo: boolean }> {
  const out = new Map<string, { units: number; isCombo: boolean }>();
  for (const line of lines) {
    const seen = out.get(line.code);
    out.set(line.code, { units: (seen?.units ?? 0) + line.quantity, isCombo: (seen?.isCombo ?? false) || line.isCombo === true });
  }
  return out;
}

function cycleReason(cycle: readonly string[]): string {
  return `its composition is a cycle (${cycle.join(' → ')})`;
}

/**
 * What a sale reserves: a plain code its units; a kit its units (see the module comment) and, for each
 * component, `ceil(quantity × units)` where units are the kit's units over all its lines; a component
 * in several lines (alone and in kits) adds up. A combo line without a composition, or a kit in a
 * cycle, reserves its own code only and is reported.
 */
export async function reservedLines(lines: readonly SoldLine[], kits: KitExploder): Promise<ReservedLines> {
  const out = new Map<string, number>();
  const unresolved: UnresolvedKit[] = [];
  const add = (code: string, units: number): void => {
    out.set(code, (out.get(code) ?? 0) + units);
  };
  const byCode = sumByCode(lines);
  const resolved = await kits.explodeMany([...byCode.keys()]);
  for (const [code, { units, isCombo }] of byCode) {
    add(code, units);
    const parts = resolved.get(code);
    if (parts === undefined || isCycle(parts)) {
      if (parts !== undefined) unresolved.push({ code, reason: cycleReason(parts.cycle) });
      else if (isCombo) unresolved.push({ code, reason: 'the store marks it a combo, but no kit source composes it' });
      continue;
    }
    for (const part of parts) add(part.code, componentUnits(part.quantity, units));
  }
  return { lines: out, unresolved };
}

/** A sale as `sales.kits.export: components` hands it to the ERP, and the kit lines left as sold. */
export interface ComponentSale {
  sale: Sale;
  /** Kit lines replaced by their components. */
  exploded: number;
  unresolved: UnresolvedKit[];
}

/**
 * The sale with each kit line replaced, where it stands, by one line per component: `Code` the
 * component, `Quantity` the component's quantity × the kit line's (exact, decimals kept: the ERP books
 * what the kit holds), `KitCode` and `KitQuantity` naming the kit line it came from, and the kit line's
 * `Id`, `SaleId` and currency. The price stays on the sale's total: a component line carries none.
 * Other lines, and kit lines that cannot be exploded (no composition, a cycle), are kept as sold.
 */
export async function componentSale(sale: Sale, kits: KitExploder): Promise<ComponentSale> {
  const items: SaleItem[] = [];
  const unresolved: UnresolvedKit[] = [];
  let exploded = 0;
  const resolved = await kits.explodeMany([...new Set(soldLines(sale).map((line) => line.code))]);
  for (const item of sale.Items ?? []) {
    const code = typeof item.Code === 'string' ? item.Code.trim() : '';
    const quantity = Number(item.Quantity);
    const parts = code === '' || !(quantity > 0) ? undefined : resolved.get(code);
    if (parts === undefined || isCycle(parts)) {
      if (parts !== undefined) unresolved.push({ code, reason: cycleReason(parts.cycle) });
      else if (item.IsCombo === true && code !== '') unresolved.push({ code, reason: 'the store marks it a combo, but no kit source composes it' });
      items.push(item);
      continue;
    }
    exploded += 1;
    for (const part of parts) {
      items.push({
        ...(item.Id === undefined ? {} : { Id: item.Id }),
        ...(item.SaleId === undefined ? {} : { SaleId: item.SaleId }),
        ...(item.Currency === undefined ? {} : { Currency: item.Currency }),
        Code: part.code,
        Quantity: product(part.quantity, quantity),
        IsItem: true,
        SaleItemType: 0,
        IsCombo: false,
        KitCode: code,
        KitQuantity: quantity,
      });
    }
  }
  return { sale: exploded === 0 ? sale : { ...sale, Items: items }, exploded, unresolved };
}
