/**
 * The kit part of `storesync inventory explain KIT` and `GET /admin/inventory/{kit}`: the kit's own rows
 * and their source, each leaf component with its sellable figure, its quantity and the kits it allows,
 * which one limits the kit, a cycle that keeps it unwritten, its refused composition rows, and whether
 * an ERP stock row for the kit's code was ignored. Reads only.
 */
import type { Redis } from 'ioredis';

import type { Config } from '../../../../config/schema.js';
import type { ValidationIssue } from '../../../../errors.js';
import { redisKitCatalog } from './catalog.js';
import type { ComponentFigure, KitComponent } from './composition.js';
import { readKitStocks } from './kit-stock.js';

/** A kit explained. */
export interface ExplainedKit {
  /** The kits source that defines it. */
  source: string;
  /** Its own rows (a nested kit stays a component here). */
  direct: KitComponent[];
  /** Its leaf components with their figures; empty for a kit in a cycle. */
  components: Array<ComponentFigure & { limiting: boolean }>;
  /** The figure storesync publishes: min over the components of floor(sellable ÷ quantity); null in a cycle. */
  figure: number | null;
  /** The component that limits it (the first of the lowest). */
  limiting: string | null;
  /** The cycle that keeps it unwritten. */
  cycle: readonly string[] | null;
  /** The ERP stock row for the kit's own code, which is not used. */
  ignoredErpStock: number | null;
  /** Composition rows of the kit its source refused at its last read. */
  refused: ValidationIssue[];
}

/** The kit explanation of target `key` (code `code`), or null when the code is not a kit. */
export async function explainKit(redis: Redis, config: Config, key: string, code: string, erpStock: unknown): Promise<ExplainedKit | null> {
  if (config.inventory.kits.length === 0) return null;
  const catalog = redisKitCatalog(redis, config.redis.prefix);
  const [stock, direct] = await Promise.all([readKitStocks({ redis, config }, catalog, [key], { ungated: true }).then((stocks) => stocks.get(key)), catalog.direct(code)]);
  if (!stock || !direct) return null;
  const refused: ValidationIssue[] = [];
  for (const { name } of config.inventory.kits) refused.push(...((await catalog.refused(name)).get(code) ?? []));
  const base = { source: direct.source, direct: direct.components, ignoredErpStock: typeof erpStock === 'number' ? erpStock : null, refused };
  if ('cycle' in stock) return { ...base, components: [], figure: null, limiting: null, cycle: stock.cycle };
  if ('waiting' in stock) return null; // not reached: read ungated
  return {
    ...base,
    components: stock.components.map((component) => ({ ...component, limiting: component.code === stock.limiting })),
    figure: stock.figure,
    limiting: stock.limiting ?? null,
    cycle: null,
  };
}

/** The lines `inventory explain` prints for a kit. */
export function describeKit(kit: ExplainedKit): string[] {
  const lines = [`Kit of ${kit.source}: ${kit.direct.map((c) => `${c.quantity} × ${c.code}`).join(' + ')}`];
  if (kit.cycle) {
    lines.push(`  refused: in the cycle ${[...kit.cycle, kit.cycle[0]].join(' → ')}; its stock is not written`);
  } else {
    for (const c of kit.components) {
      const sellable = c.sellable === undefined ? 'unknown to the ERP' : `sellable ${c.sellable}`;
      lines.push(`  ${c.code}: ${sellable}, ${c.quantity} per kit → ${c.kits} kits${c.limiting ? '  ← limits the kit' : ''}`);
    }
    lines.push(`  Kit stock: min over the components of floor(sellable ÷ quantity) = ${kit.figure ?? 0}`);
  }
  if (kit.ignoredErpStock !== null) lines.push(`  The ERP's own Stock for this code (${kit.ignoredErpStock}) is not used: a kit's stock comes from its components.`);
  for (const issue of kit.refused) lines.push(`  refused row ${issue.record ?? ''}: field ${issue.field} = ${JSON.stringify(issue.value)} breaks "${issue.rule}"`);
  return lines;
}
