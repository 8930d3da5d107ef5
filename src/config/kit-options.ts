/**
 * `inventory.kits` (issue 26): the sources of kit compositions (rows `kit`, `component`, `quantity`),
 * each an ERP source of the usual kinds read whole from its snapshot on its schedule, and a sql one
 * optionally polled by a `changes` query between those reads (src/sync/inventory/listing/kits/ reads
 * them); and `sales.kits`, how a sale's kit lines reach the ERP. Kept apart from schema.ts.
 */
import { z } from 'zod';

/** Where each kind keeps its snapshot, for the message. */
const SNAPSHOT_KEY = { sql: 'snapshot', csv: 'snapshotFile', http: 'snapshotUrl' } as const;

/** Inventory-source options a composition source has no use for: refused rather than silently ignored. */
const UNUSED = ['deletions', 'diff', 'vanished'] as const;

/**
 * The options a kits source adds to an ERP source's: on sql, when its `changes` query is polled; on
 * csv and http, `changes` only so that the rules can refuse it naming the rule (not as an unknown key).
 */
export function kitChangesOptions(cron: z.ZodString) {
  return {
    sql: {
      /**
       * When the `changes` query is polled (between the snapshot reads of `schedule`). Unset: on the
       * schedule of the first enabled inventory source that has one (the components' poll).
       */
      changesSchedule: cron.optional(),
    },
    other: { changes: z.unknown().optional() },
  };
}

/** What the rules read of a source (any kind). */
interface KitSourceShape {
  name: string;
  kind: 'sql' | 'csv' | 'http';
  schedule?: string | undefined;
  changes?: unknown;
  changesSchedule?: string | undefined;
  deletions?: string | undefined;
  snapshot?: string | undefined;
  snapshotFile?: string | undefined;
  snapshotUrl?: string | undefined;
  diff?: unknown;
  vanished?: unknown;
}

/**
 * The rules of `inventory.kits` (the config's superRefine calls it): each source has a snapshot and a
 * schedule, none of the inventory-only options, a name no inventory source has, and `changes` only on
 * sql (see `checkKitChanges`).
 */
export function checkKitSources(
  inventory: { sources: ReadonlyArray<{ name: string; enabled?: boolean; schedule?: string | undefined }>; kits: readonly KitSourceShape[] },
  ctx: z.RefinementCtx,
): void {
  const names = new Set(inventory.sources.map((source) => source.name));
  inventory.kits.forEach((source, index) => {
    const path = ['inventory', 'kits', index];
    const snapshotKey = SNAPSHOT_KEY[source.kind];
    if (source[snapshotKey] === undefined) {
      ctx.addIssue({ code: 'custom', path: [...path, snapshotKey], message: `kits source ${source.name}: ${snapshotKey} is required (compositions are read whole)` });
    }
    if (source.schedule === undefined) ctx.addIssue({ code: 'custom', path: [...path, 'schedule'], message: `kits source ${source.name}: schedule is required (when the compositions are read again)` });
    for (const key of UNUSED) {
      if (source[key] !== undefined) ctx.addIssue({ code: 'custom', path: [...path, key], message: `kits source ${source.name}: ${key} is not used by a kits source (it is read whole from its ${snapshotKey})` });
    }
    checkKitChanges(source, inventory.sources, path, ctx);
    if (names.has(source.name)) ctx.addIssue({ code: 'custom', path: [...path, 'name'], message: `kits source ${source.name}: the name is already taken by another source` });
    names.add(source.name);
  });
}

/**
 * `changes` on a kits source: sql only (a query returning every row of each kit changed since :cursor);
 * without `:afterKey` (a kit's rows are replaced whole, so a read must never continue in the middle of a
 * kit: rows sharing one cursor are read together); polled on `changesSchedule`, or on an inventory
 * source's schedule when there is one.
 */
function checkKitChanges(source: KitSourceShape, stockSources: ReadonlyArray<{ enabled?: boolean; schedule?: string | undefined }>, path: Array<string | number>, ctx: z.RefinementCtx): void {
  const issue = (key: string, message: string): void => ctx.addIssue({ code: 'custom', path: [...path, key], message: `kits source ${source.name}: ${message}` });
  if (source.kind !== 'sql') {
    if (source.changes !== undefined) issue('changes', `changes is a query of a sql kits source; a ${source.kind} kits source is read whole from its ${SNAPSHOT_KEY[source.kind]} on its schedule`);
    return;
  }
  if (typeof source.changes !== 'string') {
    if (source.changesSchedule !== undefined) issue('changesSchedule', 'changesSchedule polls the changes query, and there is none');
    return;
  }
  if (/(?<![\w:]):afterKey\b/.test(source.changes)) {
    issue('changes', 'the changes query of a kits source must not use :afterKey (a kit\'s rows are replaced whole, so rows sharing one cursor are read together: keep `cursor >= :cursor`)');
  }
  if (source.changesSchedule === undefined && !stockSources.some((stock) => stock.enabled !== false && stock.schedule !== undefined)) {
    issue('changesSchedule', 'changesSchedule is required with changes when no inventory source has a schedule to poll it on');
  }
}

/** `sales.kits`. */
export const salesKitsOption = z
  .object({
    /**
     * `kit`: the sale is exported as sold, the kit line as it is (ERPNext explodes a Product Bundle into
     * packed items, Odoo a phantom BoM at delivery). `components`: each kit line is replaced by one line
     * per component, its quantity multiplied by the kit line's, for ERPs that book only stock items.
     * @defaultValue 'kit'
     */
    export: z.enum(['kit', 'components']).default('kit'),
  })
  .prefault({});

export type SalesKitsOption = z.infer<typeof salesKitsOption>;

/** `sales.kits.export: components` needs compositions to explode kit lines with (the config's superRefine calls it). */
export function checkKitExport(config: { sales: { kits: SalesKitsOption }; inventory: { kits: readonly unknown[] } }, ctx: z.RefinementCtx): void {
  if (config.sales.kits.export === 'components' && config.inventory.kits.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['sales', 'kits', 'export'],
      message: 'an inventory.kits source to read the compositions the kit lines are exploded with (or export: kit)',
    });
  }
}

/** The cross-key checks of kits: `inventory.kits` sources, and `sales.kits.export` needing them. */
export function checkKits(config: { inventory: { sources: readonly KitSourceShape[]; kits: readonly KitSourceShape[] }; sales: { kits: SalesKitsOption } }, ctx: z.RefinementCtx): void {
  checkKitSources(config.inventory, ctx);
  checkKitExport(config, ctx);
}
