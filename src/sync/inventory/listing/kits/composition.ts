/**
 * Compositions as a source gives them (rows `kit`, `component`, `quantity`), checked and resolved: a
 * kit's leaf components with their quantities in one unit of the kit, nested kits resolved through
 * (quantities multiplied, a component reached by two paths summed), and cycles named. Pure: the
 * catalog (`catalog.ts`) stores what this computes.
 */
import type { ValidationIssue } from '../../../../errors.js';
import { codeIssues } from '../../target-key.js';

/** One component of a kit with the quantity of it in ONE unit of the kit (decimals allowed). */
export interface KitComponent {
  readonly code: string;
  readonly quantity: number;
}

/** A kit that cannot be resolved: it is in a cycle, or contains a kit that is. */
export interface KitCycle {
  readonly cycle: readonly string[];
}

/** What a kit resolves to. */
export type Resolved = readonly KitComponent[] | KitCycle;

/** One composition row accepted. */
export interface KitRow {
  kit: string;
  component: string;
  quantity: number;
}

/** True when a resolution is a cycle. */
export function isCycle(resolved: Resolved): resolved is KitCycle {
  return !Array.isArray(resolved);
}

/**
 * A source's record as a composition row, or the issues that refuse it (each naming the record, the
 * field, the value and the rule): an empty code, a quantity that is not a number above 0.
 */
export function checkKitRow(fields: Record<string, unknown>, ref: string): KitRow | ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const code = (field: 'kit' | 'component'): string => {
    const value = fields[field];
    if (typeof value !== 'string' || value.trim() === '') issues.push({ record: ref, field, value: value ?? null, rule: 'a code, not empty' });
    else issues.push(...codeIssues(value, ref).map((issue) => ({ ...issue, field })));
    return typeof value === 'string' ? value : '';
  };
  const kit = code('kit');
  const component = code('component');
  const quantity = fields.quantity;
  if (typeof quantity !== 'number' || !Number.isFinite(quantity) || quantity <= 0) {
    issues.push({ record: ref, field: 'quantity', value: quantity ?? null, rule: 'a number above 0' });
  }
  return issues.length > 0 ? issues : { kit, component, quantity: quantity as number };
}

/** The direct compositions of rows: kit → its components (a component named twice: quantities summed). */
export function groupRows(rows: Iterable<KitRow>): Map<string, KitComponent[]> {
  const byKit = new Map<string, Map<string, number>>();
  for (const { kit, component, quantity } of rows) {
    const components = byKit.get(kit) ?? new Map<string, number>();
    components.set(component, (components.get(component) ?? 0) + quantity);
    byKit.set(kit, components);
  }
  return new Map([...byKit].map(([kit, components]) => [kit, [...components].map(([code, quantity]) => ({ code, quantity }))]));
}

/**
 * Resolves every kit of `direct` to its leaf components. A kit in a cycle, and a kit containing one,
 * resolves to the cycle (its codes in order, starting from the first met): its figure cannot be
 * computed, the others' can. Leaves come sorted by code: a composition read again compares equal.
 */
export function resolveAll(direct: ReadonlyMap<string, readonly KitComponent[]>): Map<string, Resolved> {
  const out = new Map<string, Resolved>();
  const onPath: string[] = [];
  const resolve = (kit: string): Resolved => {
    const done = out.get(kit);
    if (done) return done;
    const at = onPath.indexOf(kit);
    if (at >= 0) return { cycle: onPath.slice(at) };
    onPath.push(kit);
    const leaves = new Map<string, number>();
    let cycle: KitCycle | undefined;
    for (const { code, quantity } of direct.get(kit) ?? []) {
      if (!direct.has(code)) {
        leaves.set(code, (leaves.get(code) ?? 0) + quantity);
        continue;
      }
      const inner = resolve(code);
      if (isCycle(inner)) {
        cycle ??= inner;
        continue;
      }
      for (const leaf of inner) leaves.set(leaf.code, (leaves.get(leaf.code) ?? 0) + leaf.quantity * quantity);
    }
    onPath.pop();
    const resolved: Resolved = cycle ?? [...leaves].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([code, quantity]) => ({ code, quantity: tidy(quantity) }));
    // A kit whose own path closed the cycle is stored once the cycle is known; until then, not cached.
    if (!cycle || !cycle.cycle.some((code) => onPath.includes(code))) out.set(kit, resolved);
    return resolved;
  };
  for (const kit of direct.keys()) resolve(kit);
  return out;
}

/** Each cycle of a resolution once (the kits of a cycle, and those containing it, all name it). */
export function cyclesOf(resolved: ReadonlyMap<string, Resolved>): string[][] {
  const seen = new Map<string, string[]>();
  for (const leaves of resolved.values()) {
    if (!isCycle(leaves)) continue;
    const id = [...leaves.cycle].sort().join('\u0000');
    if (!seen.has(id)) seen.set(id, [...leaves.cycle]);
  }
  return [...seen.values()];
}

/** Every kit `kit` contains, directly or through another kit (for the reverse index), leaves included. */
export function descendants(kit: string, direct: ReadonlyMap<string, readonly KitComponent[]>): Set<string> {
  const seen = new Set<string>();
  const walk = (code: string): void => {
    for (const { code: inner } of direct.get(code) ?? []) {
      if (seen.has(inner) || inner === kit) continue;
      seen.add(inner);
      walk(inner);
    }
  };
  walk(kit);
  return seen;
}

/** A product of decimal quantities without floating-point dust (0.1 × 3 = 0.30000000000000004 → 0.3). */
function tidy(quantity: number): number {
  return Number(quantity.toPrecision(12));
}

/** One component as a kit's figure used it: its sellable figure (undefined: unknown) and the whole kits it allows. */
export interface ComponentFigure extends KitComponent {
  sellable?: number;
  kits: number;
}

/**
 * A kit's figure from its components' sellable figures: `min over components of floor(sellable ÷
 * quantity)`; a component without a figure (unknown to the ERP, vanished) makes it 0. Returns the
 * figure, the component that limits it (the first of the lowest), if any, and each component's part.
 */
export function kitFigure(components: readonly KitComponent[], sellable: (code: string) => number | undefined): { figure: number; limiting?: string; components: ComponentFigure[] } {
  let figure = Number.POSITIVE_INFINITY;
  let limiting: string | undefined;
  const parts = components.map((component): ComponentFigure => {
    const own = sellable(component.code);
    // A hair of slack: 3 ÷ 0.1 is 29.999999999999996 in floating point.
    const kits = own === undefined ? 0 : Math.max(0, Math.floor(own / component.quantity + 1e-9));
    if (kits < figure) {
      figure = kits;
      limiting = component.code;
    }
    return { ...component, ...(own === undefined ? {} : { sellable: own }), kits };
  });
  if (limiting === undefined) return { figure: 0, components: parts };
  return { figure, limiting, components: parts };
}
