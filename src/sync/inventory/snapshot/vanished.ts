/**
 * What becomes of a vanished SKU (gone from a source's complete snapshot, named by its deletions
 * query, or held by the mass guard and then confirmed): the source's `vanished.action` is merged and
 * queued like any change (`zero`: Stock 0; `unpublish`: also Published false; `keep`: nothing is
 * written), the SKU is recorded as vanished (`inventory explain`) and its fingerprint removed, so that
 * it flows as new when it comes back.
 */
import { vanishedOptions } from '../../../config/diff-options.js';
import type { Cursor } from '../../../erp/types.js';
import { ConfigError } from '../../../errors.js';
import type { FlowDeps } from '../../flow.js';
import { enqueueSkus } from '../enqueue.js';
import { type InventoryRuntime, openInventoryRuntime } from '../runtime.js';
import { siteIdsOf, targetLabel, targetParts } from '../target-key.js';
import { DiffState, type VanishedEntry } from './diff-state.js';
import { snapshotEntries, type SnapshotRow, targetRows } from './snapshot-entries.js';

/** A source's `vanished.action`. */
export type VanishedAction = VanishedEntry['action'];

/** One SKU to vanish: its target key and, for a deletion, the deletion's cursor (it versions the write). */
export interface Vanishing {
  key: string;
  cursor?: Cursor;
  version?: number;
}

/** What vanishing a target writes: nothing for `keep`. */
function vanishRow(source: string, { key, cursor }: Vanishing, action: VanishedAction): SnapshotRow | undefined {
  // A price list's row gone takes no stock away (the item's stock is its site's target's).
  if (action === 'keep' || targetParts(key).priceListId !== undefined) return undefined;
  const values: Record<string, unknown> = { Stock: 0, ...(action === 'unpublish' ? { Published: false } : {}) };
  return { source, cursor: cursor ?? null, sku: key, values, fields: Object.keys(values) };
}

/** Options of `vanish`. */
export interface VanishOptions {
  action: VanishedAction;
  reason: VanishedEntry['reason'];
  /** A person confirmed what the mass guard held. */
  confirmed?: boolean;
}

/**
 * Applies the action to `items` of `source`: merges and queues the writes (a row without an ordered
 * cursor takes the store's applied version, so it never overrides a newer change), then records the
 * SKUs as vanished and removes their fingerprints. Returns how many SKUs were queued.
 */
export async function vanish(rt: InventoryRuntime, diffState: DiffState, source: string, items: readonly Vanishing[], options: VanishOptions): Promise<number> {
  if (items.length === 0) return 0;
  const at = rt.now();
  // A bare Code vanished from every site of `inventory.sites`.
  const rows = targetRows(items.flatMap((item) => vanishRow(source, item, options.action) ?? []), rt.config.inventory.priceLists, siteIdsOf(rt.config.inventory));
  let queued = 0;
  if (rows.length > 0) {
    const priorities = await rt.state.merge(await snapshotEntries(rt.state, rows, at, { resend: true }));
    queued = await enqueueSkus(
      rt.queue,
      rows.map(({ sku }) => sku),
      { priorities, batchSize: rt.config.inventory.batchSize, spread: rt.config.inventory.concurrency },
    );
  }
  await diffState.markVanished(
    source,
    items.map(({ key, version }): [string, VanishedEntry] => [
      key,
      { at, reason: options.reason, action: options.action, ...(version === undefined ? {} : { version }), ...(options.confirmed ? { confirmed: true } : {}) },
    ]),
  );
  await diffState.writeFingerprints(source, new Map(), items.map(({ key }) => key));
  rt.metrics.vanished.inc({ source, reason: options.reason }, items.length);
  const sample = items.slice(0, 10).map(({ key }) => targetLabel(key));
  rt.logger.warn({ source, skus: items.length, action: options.action, reason: options.reason, sample }, `${items.length} SKU(s) vanished from source ${source} (${options.reason}): ${options.action}`);
  return queued;
}

/** What `confirmHeld` did. */
export interface ConfirmReport {
  source: string;
  /** SKUs whose action was applied. */
  confirmed: number;
  /** The first of them. */
  sample: string[];
}

/**
 * Applies the action to the SKUs the mass guard holds for `source` (`storesync inventory vanished
 * --confirm`, `POST /admin/inventory/vanished/confirm`). A held SKU that came back since is no longer
 * held (each diff replaces the held set), so nothing is written for it.
 */
export async function confirmHeld(rt: InventoryRuntime, source: string, action: VanishedAction): Promise<ConfirmReport> {
  const diffState = new DiffState(rt.redis, rt.config.redis.prefix);
  const keys = [...(await diffState.held(source)).keys()];
  await vanish(rt, diffState, source, keys.map((key) => ({ key })), { action, reason: 'absent', confirmed: true });
  await diffState.releaseHeld(source, keys);
  rt.metrics.vanishedHeld.set({ source }, await diffState.heldCount(source));
  rt.events.emit('inventory:vanished:confirmed', { source, skus: keys.length });
  return { source, confirmed: keys.length, sample: keys.slice(0, 20).map((key) => targetLabel(key)) };
}

/** What the mass guard holds for a source (`storesync inventory vanished --source NAME`). */
export interface HeldReport {
  source: string;
  /** What confirming would do. */
  action: VanishedAction;
  held: number;
  /** When the diff that held them ran (ISO), or null when nothing is held. */
  since: string | null;
  /** The held SKUs, first ones. */
  sample: string[];
}

/** The action of configured inventory source `source`, or a ConfigError naming the sources there are. */
function actionOf(deps: FlowDeps, source: string): VanishedAction {
  const config = deps.config.inventory.sources.find((candidate) => candidate.name === source);
  if (!config) {
    const names = deps.config.inventory.sources.map(({ name }) => name);
    throw new ConfigError([`inventory.sources: no source named "${source}" (configured: ${names.join(', ') || 'none'})`]);
  }
  return vanishedOptions(config).action;
}

/** Lists what the mass guard holds for `source`, with its own connection. */
export async function heldOf(deps: FlowDeps, source: string, sampleSize = 50): Promise<HeldReport> {
  const action = actionOf(deps, source);
  const redis = deps.connect();
  try {
    const held = await new DiffState(redis, deps.config.redis.prefix).held(source);
    const since = Math.min(...[...held.values()].map(({ at }) => at));
    return { source, action, held: held.size, since: held.size === 0 ? null : new Date(since).toISOString(), sample: [...held.keys()].slice(0, sampleSize).map((key) => targetLabel(key)) };
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** Confirms what the mass guard holds for `source` (applies its action), with its own runtime. */
export async function confirmVanished(deps: FlowDeps, source: string): Promise<ConfirmReport> {
  const action = actionOf(deps, source);
  const rt = openInventoryRuntime(deps);
  try {
    return await confirmHeld(rt, source, action);
  } finally {
    await rt.close();
  }
}
