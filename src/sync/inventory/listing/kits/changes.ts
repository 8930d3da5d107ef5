/**
 * The change feed of a sql kits source (`inventory.kits[].changes`), polled on its `changesSchedule`
 * between the snapshot reads of its `schedule`, with the inventory sources' cursor handling (the same
 * `drainSource`: the overlap before the stored cursor, rows sharing one cursor read together) and its
 * cursor kept in Redis (`state:kit:cursor:{source}`).
 *
 * The contract: the query returns EVERY row of each kit changed at or after `:cursor`, each row carrying
 * the kit's cursor (when the kit or any of its rows last changed), so all rows of one kit share one
 * cursor. A kit read is replaced whole by its rows. A row with a kit and a cursor but neither component
 * nor quantity says "this kit has no composition now" (a disabled bundle, an archived or emptied BoM:
 * a LEFT JOIN gives it): the kit is removed, unless another of its rows names a component. A kit whose
 * every row is refused keeps its last composition (the refusal is recorded, as for the snapshot).
 * Whatever the feed cannot see (a row deleted without touching its kit's cursor, a hard-deleted BoM) the
 * snapshot re-read on `schedule` reconciles: never trust one signal.
 *
 * A batch cut at the limit may end in the middle of a kit: the kits at the batch's last cursor are then
 * held back, and the next read (which starts at that cursor, rows sharing it included, or the next poll
 * from the stored cursor) reads them whole. Hence no `:afterKey` (it would continue after the cut row).
 */
import type { Config } from '../../../../config/schema.js';
import { compareCursors, toCursor } from '../../../../erp/cursor.js';
import { createSource, KIT_FIELDS } from '../../../../erp/index.js';
import type { ChangeBatch, Cursor } from '../../../../erp/types.js';
import { formatIssue, type ValidationIssue } from '../../../../errors.js';
import { drainSource, SourceCursors } from '../../../drain-source.js';
import { enqueueSkus, PRIORITY } from '../../enqueue.js';
import { siteIdsOf, stockTargets } from '../../target-key.js';
import type { KitChangesReport } from '../../types.js';
import { applyKitChanges, type KitChanges } from './catalog.js';
import { checkKitRow, groupRows, type KitComponent, type KitRow } from './composition.js';
import type { KitRuntime } from './runtime.js';

/** A source of `inventory.kits`. */
type KitSourceConfig = Config['inventory']['kits'][number];

/** Full batches read in one poll before yielding to the next tick (as the inventory sources'). */
const MAX_ROUNDS = 50;

/** Where the kits sources' change-feed cursors live: `state:kit:cursor:{source}`. */
export function kitCursors(rt: Pick<KitRuntime, 'redis' | 'config'>): SourceCursors {
  return new SourceCursors(rt.redis, rt.config.redis.prefix, 'kit');
}

/** The kits of one batch: those read whole (with their components, or null), and the rows refused. */
export interface KitBatch {
  changes: Map<string, KitRow[] | null>;
  refused: Array<{ kit?: string; ref: string; issues: ValidationIssue[] }>;
  /** Kits held back: at the last cursor of a full batch, maybe cut; the next read has them whole. */
  held: string[];
}

/**
 * Sorts one batch of change rows by kit (see the module comment): a kit's good rows are its composition;
 * a kit with only a row without component and quantity has none (null); a kit with only refused rows is
 * left out (it keeps its last composition). With `full` (the batch has as many rows as the limit), the kits
 * at the batch's last cursor are held back, unless every row shares that cursor (then the source, which
 * raises its limit past a group of rows sharing one cursor, read the group whole).
 */
export function kitBatch(batch: Pick<ChangeBatch, 'records' | 'rejected'>, full: boolean): KitBatch {
  const good = new Map<string, KitRow[]>();
  const emptied = new Set<string>();
  const refused: KitBatch['refused'] = [];
  const cursorOf = new Map<string, Cursor>();
  let first: Cursor | undefined;
  let last: Cursor = null;
  for (const record of batch.records) {
    const kit = typeof record.fields.kit === 'string' ? record.fields.kit : undefined;
    if (kit !== undefined) cursorOf.set(kit, record.cursor);
    if (compareCursors(record.cursor, last) > 0) last = record.cursor;
    if (first === undefined || compareCursors(record.cursor, first) < 0) first = record.cursor;
    if (kit !== undefined && record.fields.component === undefined && record.fields.quantity === undefined) {
      emptied.add(kit);
      continue;
    }
    const checked = checkKitRow(record.fields, record.ref);
    if (!Array.isArray(checked)) good.set(checked.kit, [...(good.get(checked.kit) ?? []), checked]);
    else refused.push({ ...(kit === undefined ? {} : { kit }), ref: record.ref, issues: checked });
  }
  for (const { ref, issues } of batch.rejected) {
    const named = issues[0]?.record;
    refused.push({ ...(named !== undefined && named !== ref ? { kit: named } : {}), ref, issues });
  }
  // A full batch of one cursor is a tie group the source read whole (it raises its limit until it has).
  const cut = full && first !== undefined && compareCursors(first, last) !== 0;
  const held = cut ? [...cursorOf].filter(([, cursor]) => compareCursors(cursor, last) === 0).map(([kit]) => kit) : [];
  const changes = new Map<string, KitRow[] | null>();
  for (const [kit, rows] of good) changes.set(kit, rows);
  for (const kit of emptied) if (!good.has(kit)) changes.set(kit, null);
  for (const kit of held) changes.delete(kit);
  return { changes, refused: refused.filter((row) => row.kit === undefined || !held.includes(row.kit)), held };
}

/** Polls `config`'s `changes` query from its stored cursor, applies the kits read and queues those that changed. */
export async function pollKitChanges(rt: KitRuntime, config: KitSourceConfig): Promise<KitChangesReport> {
  if (config.kind !== 'sql' || config.changes === undefined) throw new Error(`kits source ${config.name} has no changes query`);
  const source = createSource(config, { fields: KIT_FIELDS, logger: rt.logger, now: rt.now });
  const cursors = kitCursors(rt);
  const report: KitChangesReport = { source: config.name, read: 0, refused: 0, kits: 0, removed: 0, changed: 0, cycles: [], cursor: null };
  const sites = siteIdsOf(rt.config.inventory);
  const changed = new Set<string>();
  try {
    const from = (await cursors.get(config.name)) ?? toCursor(config.initialCursor);
    const drained = await drainSource(source, {
      cursor: from,
      limit: config.limit,
      maxRounds: MAX_ROUNDS,
      queue: async (batch) => {
        const rows = batch.records.length + batch.rejected.length + (batch.known ?? 0);
        const { changes, refused } = kitBatch(batch, rows >= config.limit);
        const write = await applyKitChanges(rt.redis, rt.config.redis.prefix, config.name, compositionsOf(changes), refused);
        report.kits += write.kits;
        report.removed += write.removed.length;
        report.refused += refused.length;
        if (write.cycles.length > 0) report.cycles = write.cycles;
        for (const kit of write.changed) changed.add(kit);
        // Queued before the cursor moves past the batch: a crash re-reads it, and the queue coalesces.
        const targets = write.changed.flatMap((kit) => stockTargets(kit, sites));
        if (targets.length > 0) await enqueueSkus(rt.queue, targets, { priority: PRIORITY.decrease, batchSize: rt.config.inventory.batchSize, spread: rt.config.inventory.concurrency });
        for (const { issues } of refused.slice(0, 10)) rt.logger.warn({ source: config.name }, `kits source ${config.name}: change row refused: ${issues.map(formatIssue).join('; ')}`);
      },
      saveCursor: (cursor) => cursors.set(config.name, cursor),
    });
    report.read = drained.read;
    report.cursor = drained.cursor;
  } finally {
    await source.close();
  }
  report.changed = changed.size;
  for (const cycle of report.cycles) rt.logger.warn({ source: config.name, cycle }, `kits source ${config.name}: cycle ${[...cycle, cycle[0]].join(' → ')} refused; its kits are not written`);
  rt.events.emit('inventory:kits:changes:done', report);
  return report;
}

/** The kits of a batch as the catalog takes them (a component named twice in a kit: summed). */
function compositionsOf(changes: ReadonlyMap<string, KitRow[] | null>): KitChanges {
  const out = new Map<string, KitComponent[] | null>();
  for (const [kit, rows] of changes) out.set(kit, rows === null ? null : (groupRows(rows).get(kit) ?? null));
  return out;
}
