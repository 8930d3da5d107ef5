/**
 * The options of the snapshot diff and vanished SKUs (issue 22; inventory sources only, see
 * src/sync/inventory/snapshot/snapshot-diff.ts): their schema, the rules that span several keys of a source,
 * and their defaults. Kept apart from schema.ts, which spreads them into every source kind.
 */
import { z } from 'zod';

/** What `vanished.action` may be. */
export type VanishedActionOption = 'zero' | 'unpublish' | 'keep';

/** The keys every source kind gets; `cron` is schema.ts's cron expression type. */
export function snapshotDiffOptions(cron: z.ZodString) {
  return {
    /**
     * Poll the source's snapshot by difference on `schedule`: only SKUs whose values changed since the
     * previous complete snapshot are queued, and SKUs gone from it have vanished. Unset: no diff.
     */
    diff: z.object({ schedule: cron }).strict().optional(),
    /**
     * What becomes of a SKU that vanished (gone from the snapshot, or named by `deletions`): `zero`
     * publishes Stock 0, `unpublish` also sends Published false, `keep` leaves the store alone. A diff
     * that would vanish more than `maxFraction` of the previous snapshot's SKUs (and more than 10)
     * vanishes none: they are held until confirmed. @defaultValue { action: zero, maxFraction: 0.05 }
     */
    vanished: z
      .object({ action: z.enum(['zero', 'unpublish', 'keep']).default('zero'), maxFraction: z.number().min(0).max(1).default(0.05) })
      .strict()
      .optional(),
  };
}

/** What the rules read of a source (any kind). */
interface DiffSourceShape {
  name: string;
  kind: 'sql' | 'csv' | 'http';
  schedule?: string | undefined;
  changes?: string | undefined;
  snapshot?: string | undefined;
  snapshotFile?: string | undefined;
  snapshotUrl?: string | undefined;
  diff?: { schedule: string } | undefined;
  vanished?: { action?: VanishedActionOption; maxFraction?: number } | undefined;
  deletions?: string | undefined;
}

/** Where each kind keeps its snapshot, for the message. */
const SNAPSHOT_KEY = { sql: 'a snapshot query', csv: 'a snapshotFile', http: 'a snapshotUrl' } as const;

/** True when `source` has a full current set to read (the reconcile's and the diff's). */
export function hasSnapshot(source: Pick<DiffSourceShape, 'kind' | 'snapshot' | 'snapshotFile' | 'snapshotUrl'>): boolean {
  return (source.kind === 'sql' ? source.snapshot : source.kind === 'csv' ? source.snapshotFile : source.snapshotUrl) !== undefined;
}

/** The rules of these options that span several keys of a source (the config's superRefine calls it). */
export function checkDiffSources(
  config: { inventory: { sources: readonly DiffSourceShape[] }; fulfillment: { sources: readonly DiffSourceShape[] } },
  ctx: z.RefinementCtx,
): void {
  config.inventory.sources.forEach((source, index) => {
    const path = ['inventory', 'sources', index];
    if (source.diff !== undefined && !hasSnapshot(source)) {
      ctx.addIssue({ code: 'custom', path: [...path, 'diff'], message: `source ${source.name}: diff needs ${SNAPSHOT_KEY[source.kind]}` });
    }
    if (source.diff === undefined && source.schedule === undefined) {
      ctx.addIssue({ code: 'custom', path: [...path, 'schedule'], message: `source ${source.name}: schedule is required (only a source with a diff may leave it out)` });
    }
    if (source.kind === 'sql' && source.changes === undefined && source.diff === undefined) {
      ctx.addIssue({ code: 'custom', path: [...path, 'changes'], message: `source ${source.name}: changes is required (only a source with a snapshot and a diff may leave it out)` });
    }
    if (source.kind === 'sql' && source.changes === undefined && source.schedule !== undefined) {
      ctx.addIssue({ code: 'custom', path: [...path, 'schedule'], message: `source ${source.name}: schedule polls the changes query, and there is none: diff.schedule is this source's schedule` });
    }
  });
  config.fulfillment.sources.forEach((source, index) => {
    const path = ['fulfillment', 'sources', index];
    for (const key of ['diff', 'vanished', 'deletions'] as const) {
      if (source[key] !== undefined) ctx.addIssue({ code: 'custom', path: [...path, key], message: `source ${source.name}: ${key} is an inventory source option` });
    }
    if (source.schedule === undefined) ctx.addIssue({ code: 'custom', path: [...path, 'schedule'], message: `source ${source.name}: schedule is required` });
    if (source.kind === 'sql' && source.changes === undefined) ctx.addIssue({ code: 'custom', path: [...path, 'changes'], message: `source ${source.name}: changes is required` });
  });
}

/** A source's `vanished` options with their defaults. */
export function vanishedOptions(source: Pick<DiffSourceShape, 'vanished'>): { action: VanishedActionOption; maxFraction: number } {
  return { action: source.vanished?.action ?? 'zero', maxFraction: source.vanished?.maxFraction ?? 0.05 };
}
