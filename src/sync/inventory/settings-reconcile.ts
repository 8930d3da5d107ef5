/**
 * The settings changes the walk at start (`reevaluate.ts`) cannot apply, because Redis holds only the
 * figures already read (issue 28): a source's `stockRounding` (its figures were rounded when read), a
 * site added (it would get the stock alone: prices and the other fields per site are not kept), a price
 * list mapped to another id (the ERP's rows of that list were never kept under the new id). For each,
 * the check at start queues the reconcile of the sources concerned as a control job, the work of
 * `storesync resync inventory --source NAME`: it reads the source's snapshot and the store and queues
 * only the differences, so nothing unchanged is re-sent. A source that is disabled or has no snapshot
 * has nothing to reconcile from: it is told, not queued.
 */
import { hasSnapshot } from '../../config/diff-options.js';
import { inventoryResyncSchema } from '../control/job-data.js';
import { addControlJob, openControlQueue } from '../control/runtime.js';
import type { InventoryRuntime } from './runtime.js';
import { priceListIdsMoved, roundingChanged, settingsSites, type TargetSettings } from './target-settings.js';
import type { ReevaluateReport } from './types.js';

/** Who the control job says asked for it (the dashboard shows it beside the job). */
const REQUESTED_BY = 'storesync: settings changed at start';

/** Per source to reconcile, why (the changes that concern it). */
export type ReconcilePlan = Map<string, string[]>;

/** The sources whose reconcile the changes `changed` from `before` to `now` need, each with why. */
export function reconcilePlan(rt: InventoryRuntime, before: TargetSettings, now: TargetSettings, changed: readonly string[]): ReconcilePlan {
  const plan: ReconcilePlan = new Map();
  const add = (source: string, why: string): void => {
    plan.set(source, [...(plan.get(source) ?? []), why]);
  };
  for (const source of roundingChanged(changed)) add(source, 'stockRounding');
  const oldSites = settingsSites(before);
  const added = settingsSites(now).filter((siteId) => !oldSites.includes(siteId));
  const every = rt.config.inventory.sources.filter((source) => source.enabled).map((source) => source.name);
  if (added.length > 0) for (const source of every) add(source, `site${added.length > 1 ? 's' : ''} ${added.join(', ')} added`);
  if (priceListIdsMoved(before, now)) for (const source of every) add(source, 'price list ids');
  return plan;
}

/** True when `plan` reconciles every enabled source: a site added then gets all its fields from the reconcile. */
export function coversEverySource(rt: InventoryRuntime, plan: ReconcilePlan): boolean {
  return rt.config.inventory.sources.every((source) => !source.enabled || (hasSnapshot(source) && plan.has(source.name)));
}

/** Queues the reconcile of each source of `plan` that can be reconciled; the report says which were and which not, and why. */
export async function queueReconciles(rt: InventoryRuntime, plan: ReconcilePlan, report: ReevaluateReport): Promise<void> {
  if (plan.size === 0) return;
  const queue = openControlQueue(rt.redis, rt.config);
  try {
    for (const [name, why] of plan) {
      const source = rt.config.inventory.sources.find((candidate) => candidate.name === name);
      if (!source?.enabled) {
        report.notReconciled.push({ source: name, why, reason: 'disabled' });
      } else if (!hasSnapshot(source)) {
        report.notReconciled.push({ source: name, why, reason: 'no snapshot' });
      } else {
        const jobId = await addControlJob(queue, inventoryResyncSchema.parse({ action: 'inventory-reconcile', source: name, requestedBy: REQUESTED_BY }));
        report.reconciles.push({ source: name, why, jobId });
      }
    }
  } finally {
    await queue.close();
  }
}

/** The part of the pass's log line about the reconciles (empty when none was needed). */
export function describeReconciles({ reconciles, notReconciled }: Pick<ReevaluateReport, 'reconciles' | 'notReconciled'>): string {
  const parts = reconciles.map(({ source, why, jobId }) => `a reconcile of source ${source} queued (${why}; control job ${jobId})`);
  for (const { source, why, reason } of notReconciled) {
    const what = reason === 'disabled' ? 'is disabled' : 'has no snapshot to reconcile from';
    parts.push(`source ${source} (${why}) ${what}: its figures change with the ERP's next change`);
  }
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
}
