/**
 * One read of a kits source (`inventory.kits`): its snapshot read whole, each row checked (a quantity
 * not above 0 or not a number, an empty code: refused with its reason, the rest used), the composition
 * written (`writeComposition`: cycles refused by name) and the stock targets of the kits that changed
 * queued to be re-computed. A read that fails midway writes nothing: the last complete composition stays.
 */
import type { SourceConfig } from '../../../../config/schema.js';
import { createSource, KIT_FIELDS } from '../../../../erp/index.js';
import { formatIssue, type ValidationIssue } from '../../../../errors.js';
import { enqueueSkus, PRIORITY } from '../../enqueue.js';
import { siteIdsOf, stockTargets } from '../../target-key.js';
import type { KitsReport } from '../../types.js';
import { writeComposition } from './catalog.js';
import { checkKitRow, type KitRow } from './composition.js';
import type { KitRuntime } from './runtime.js';

/** Reads `config`'s compositions and applies them; emits `inventory:kits:done`. */
export async function refreshKits(rt: KitRuntime, config: SourceConfig): Promise<KitsReport> {
  const source = createSource(config, { fields: KIT_FIELDS, logger: rt.logger, now: rt.now });
  const rows: KitRow[] = [];
  const refused: Array<{ kit?: string; ref: string; issues: ValidationIssue[] }> = [];
  let read = 0;
  try {
    for await (const chunk of source.snapshot?.() ?? []) {
      read += chunk.length + (chunk.rejected?.length ?? 0);
      // A row the source could not coerce names its kit as the issues' record, when it had one.
      for (const { ref, issues } of chunk.rejected ?? []) {
        const named = issues[0]?.record;
        refused.push({ ...(named !== undefined && named !== ref ? { kit: named } : {}), ref, issues });
      }
      for (const record of chunk) {
        const checked = checkKitRow(record.fields, record.ref);
        if (!Array.isArray(checked)) rows.push(checked);
        else refused.push({ ...(typeof record.fields.kit === 'string' ? { kit: record.fields.kit } : {}), ref: record.ref, issues: checked });
      }
    }
  } finally {
    await source.close();
  }
  const write = await writeComposition(rt.redis, rt.config.redis.prefix, config.name, rows, refused);
  // A composition change may lower a kit's figure as well as raise it: queued as a decrease (stock-outs first).
  const sites = siteIdsOf(rt.config.inventory);
  const targets = write.changed.flatMap((kit) => stockTargets(kit, sites));
  if (targets.length > 0) await enqueueSkus(rt.queue, targets, { priority: PRIORITY.decrease, batchSize: rt.config.inventory.batchSize, spread: rt.config.inventory.concurrency });
  for (const cycle of write.cycles) rt.logger.warn({ source: config.name, cycle }, `kits source ${config.name}: cycle ${[...cycle, cycle[0]].join(' → ')} refused; its kits are not written`);
  for (const { issues } of refused.slice(0, 10)) rt.logger.warn({ source: config.name }, `kits source ${config.name}: row refused: ${issues.map(formatIssue).join('; ')}`);
  const report: KitsReport = { source: config.name, read, refused: refused.length, kits: write.kits, changed: write.changed.length, cycles: write.cycles };
  rt.events.emit('inventory:kits:done', report);
  return report;
}
