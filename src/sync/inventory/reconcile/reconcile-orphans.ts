/**
 * Store items no ERP source has ("orphans"): a product deleted or archived in the ERP, a quant merged
 * away, an item created by hand on the store. Only a full reconcile can tell (every enabled source read,
 * each with a snapshot, no SKU filter): a partial one would take the SKUs of the sources not read for
 * orphans. `inventory.reconcile.orphans` decides what happens: `report` counts and lists them, `zero`
 * publishes Stock 0, `unpublish` also sends Published false.
 *
 * The action goes through the same guard as vanished SKUs (`../snapshot/mass-guard.ts`), measured against the store
 * items read: more than `orphansMaxFraction` of them (and more than 10) is more likely an ERP query
 * gone wrong than a real event, so none is acted on; an error line and `storesync_reconcile_orphans
 * {state="held"}` say so, the report lists them, and `resync inventory --confirm-orphans` acts. A
 * confirmation re-reads both sides rather than replaying a stored list: what it acts on is what is
 * true when the person confirms.
 *
 * Only items whose store value the action changes count and are queued (Stock not 0; still published
 * for `unpublish`): once done, the next reconcile has nothing to do nor to hold. The values go through
 * the pending state as forced values with the version the store last took, like a snapshot row without
 * a cursor: a SKU that comes back in the ERP with a newer change wins. Each site's item is a target of
 * its own (`CODE (site 2)`), so an orphan on several sites read is acted on every one of them in the same
 * run; a read without a site filter acts on the default target (the bare Code), once per code.
 */
import type { InventoryItem } from '../../../store/schemas/index.js';
import { PRIORITY } from '../enqueue.js';
import type { InventoryRuntime } from '../runtime.js';
import { exceedsMassGuard } from '../snapshot/index.js';
import { keyOf } from '../target-key.js';
import type { OrphanReport, ReconcileReport } from '../types.js';
import type { ReconcileStaging } from './reconcile-staging.js';

/** The source name orphan values are merged under (pending entries, `inventory explain`, metrics). */
export const ORPHANS_SOURCE = 'reconcile-orphans';

/**
 * Collects the orphans while the store streams past, keeping only the codes the action would change: a
 * page's are staged (`stage`), the distinct codes and targets in the run's staging, counted as they are
 * first staged; the process keeps the counts and the sample.
 */
export class OrphanTally {
  readonly #action: OrphanReport['action'];
  readonly #sampleSize: number;
  /** The page's orphan codes, and the targets (the code on the site it was read on; unfiltered: the bare code) the action changes. */
  #codes: string[] = [];
  #targets: string[] = [];
  #count = 0;
  #toChange = 0;
  readonly sample: string[] = [];

  constructor(action: OrphanReport['action'], sampleSize: number) {
    this.#action = action;
    this.#sampleSize = sampleSize;
  }

  /** A store item whose code no ERP record has. */
  see(item: InventoryItem, siteId: number | null): void {
    const code = item.Code;
    this.#codes.push(code);
    if (this.#action !== 'report' && changes(this.#action, item)) this.#targets.push(keyOf({ code, ...(siteId === null ? {} : { siteId }) }));
  }

  /** Stages what the page's items added, counting the codes and targets not staged before. */
  async stage(staging: ReconcileStaging): Promise<void> {
    const [codes, targets] = [this.#codes, this.#targets];
    this.#codes = [];
    this.#targets = [];
    const fresh = await staging.addDistinct('orphans', codes);
    this.#count += fresh.length;
    for (const code of fresh.slice(0, this.#sampleSize - this.sample.length)) this.sample.push(code);
    this.#toChange += (await staging.addDistinct('orphans:change', targets)).length;
  }

  /** Distinct orphan codes seen. */
  get count(): number {
    return this.#count;
  }

  /** Stages the values to queue for the action, one item per target it changes, at the priority of a decrease. */
  async queueItems(staging: ReconcileStaging): Promise<void> {
    const values = actionValues(this.#action);
    const fields = Object.keys(values);
    for await (const targets of staging.distinct('orphans:change')) {
      await staging.queue(targets.map((sku) => ({ source: ORPHANS_SOURCE, cursor: null, sku, values, fields, priority: PRIORITY.decrease })));
    }
  }

  get toChange(): number {
    return this.#toChange;
  }
}

/** What the action sends. */
function actionValues(action: OrphanReport['action']): Record<string, unknown> {
  return action === 'unpublish' ? { Stock: 0, Published: false } : action === 'zero' ? { Stock: 0 } : {};
}

/** True when the action would change what the store shows for `item`. */
function changes(action: OrphanReport['action'], item: InventoryItem): boolean {
  const stock = Number(item.Stock ?? 0);
  return stock !== 0 || (action === 'unpublish' && item.Published !== false);
}

/**
 * Fills the report's orphan part and decides: the queue items to act on, staged after the others (their
 * count in `report.orphans.queued`), or none when the guard holds them (unless `confirmed`). Logs the held
 * set as an error line and sets the metric; a run that could not tell (`checked` false) leaves the metric
 * as the last full run set it.
 */
export async function decideOrphans(
  rt: InventoryRuntime,
  tally: OrphanTally | undefined,
  staging: ReconcileStaging,
  report: ReconcileReport,
  options: { confirmed: boolean },
): Promise<void> {
  const { orphans: action, orphansMaxFraction } = rt.config.inventory.reconcile;
  if (tally === undefined) {
    report.orphans = { checked: false, action, toChange: 0, queued: 0, held: 0 };
    return;
  }
  report.onlyOnStore = tally.count;
  report.onlyOnStoreSample = tally.sample;
  const toChange = tally.toChange;
  const held = toChange > 0 && !options.confirmed && exceedsMassGuard(toChange, report.storeItems, orphansMaxFraction);
  report.orphans = { checked: true, action, toChange, queued: 0, held: held ? toChange : 0 };
  rt.metrics.reconcileOrphans.set({ state: 'found' }, tally.count);
  rt.metrics.reconcileOrphans.set({ state: 'held' }, report.orphans.held);
  if (held) {
    rt.logger.error(
      {
        action,
        orphans: tally.count,
        held: toChange,
        storeItems: report.storeItems,
        maxFraction: orphansMaxFraction,
        sample: tally.sample,
      },
      `inventory reconcile: ${toChange} of ${report.storeItems} store items have no ERP record and would be ${action === 'zero' ? 'zeroed' : 'unpublished'}: ` +
        `more than inventory.reconcile.orphansMaxFraction (${orphansMaxFraction}), none acted on; check the ERP sources, then run ` +
        '`storesync resync inventory --confirm-orphans`',
    );
    return;
  }
  await tally.queueItems(staging);
  report.orphans.queued = toChange;
}
