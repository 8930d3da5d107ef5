/**
 * Propagation: a component whose stock inputs changed (its ERP Stock or SafetyStock, or its
 * reservations) re-queues every kit that contains it, through the reverse index (`kitsContaining`, one
 * SUNION per job: O(kits containing it), never a scan of the kits), on the component target's site, with
 * the component job's priority (stock-outs first), in jobs of up to `inventory.batchSize` kits. The kits
 * of one component job are not spread over `inventory.concurrency` jobs as a poll's changes are: the
 * component jobs already run side by side, a job's PUTs share the store slots anyway, and every job
 * costs its BullMQ scripts (spread, the 50 kits of a job of 50 components made 13 jobs of 4). The worker calls
 * it once a component's job has settled; whatever changed the component (a poll, a snapshot diff, a
 * reconcile, a vanished SKU, a sale's reservation) queued that job.
 */
import { enqueueSkus } from '../../enqueue.js';
import type { SkuState } from '../../state.js';
import { keyOf, targetParts } from '../../target-key.js';
import { RESERVATION_VERSION_FIELD, SAFETY_FIELD } from '../published-stock.js';
import { parseSkuReservations } from '../reservations.js';
import type { KitCatalog } from './catalog.js';
import type { KitRuntime } from './runtime.js';

/** True when a target's stock inputs moved since the store last took its figure. */
function stockInputsMoved(state: SkuState): boolean {
  if (state.pending.has('Stock') || state.pending.has(SAFETY_FIELD)) return true;
  return parseSkuReservations(state.reservations).version !== (state.applied.get(RESERVATION_VERSION_FIELD) ?? 0);
}

/**
 * Queues the kits containing the components among `states` whose stock inputs moved (`kitKeys`: the
 * job's targets that are kits themselves, left out); returns how many kit targets were queued.
 */
export async function requeueKits(
  rt: Pick<KitRuntime, 'queue' | 'config'>,
  catalog: KitCatalog,
  states: ReadonlyMap<string, SkuState | undefined>,
  kitKeys: ReadonlySet<string>,
  priority: number,
): Promise<number> {
  const moved = [...states].flatMap(([key, state]) => {
    const target = targetParts(key);
    return state && !kitKeys.has(key) && target.priceListId === undefined && stockInputsMoved(state) ? [target] : [];
  });
  if (moved.length === 0) return 0;
  const targets: string[] = [];
  // One SUNION per site (a component on site 2 re-queues its kits on site 2).
  const bySite = new Map<number | undefined, string[]>();
  for (const { code, siteId } of moved) bySite.set(siteId, [...(bySite.get(siteId) ?? []), code]);
  for (const [siteId, codes] of bySite) {
    const kits = await catalog.kitsContainingAny(codes);
    for (const kit of kits) targets.push(keyOf({ code: kit, ...(siteId === undefined ? {} : { siteId }) }));
  }
  if (targets.length === 0) return 0;
  return enqueueSkus(rt.queue, targets, { priority, batchSize: rt.config.inventory.batchSize, spread: 1 });
}
