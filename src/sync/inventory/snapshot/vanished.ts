/**
 * What becomes of a vanished SKU (gone from a source's complete snapshot, named by its deletions
 * query, or held by the mass guard and then confirmed): the source's `vanished.action` is merged and
 * queued like any change (`zero`: Stock 0; `unpublish`: also Published false; `keep`: nothing is
 * written), the SKU is recorded as vanished (`inventory explain`) and its fingerprint removed, so that
 * it flows as new when it comes back.
 *
 * What the mass guard holds is a person's to review: listed in Code order page by page (`heldPage`,
 * `eachHeld`), then confirmed (the source's action applied) or kept (recorded as vanished, nothing
 * written: the store keeps the values it had, and a SKU the ERP has again later flows as new).
 */
import { vanishedOptions } from '../../../config/diff-options.js';
import type { Cursor } from '../../../erp/types.js';
import { ConfigError } from '../../../errors.js';
import type { FlowDeps } from '../../flow.js';
import { enqueueSkus } from '../enqueue.js';
import { type InventoryRuntime, openInventoryRuntime } from '../runtime.js';
import { pastTargetsOf, siteIdsOf, targetLabel, targetParts } from '../target-key.js';
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
  /** A person confirmed (or kept) what the mass guard held: `confirmHeld` counts and logs them. */
  confirmed?: boolean;
  /** The caller vanishes one set in several calls, and counts and logs it once (`announceVanished`). */
  quiet?: boolean;
}

/** Counts SKUs vanished from `source` and logs them in one line (`sample`: up to 10 of their keys). */
export function announceVanished(rt: InventoryRuntime, source: string, count: number, sample: readonly string[], options: Pick<VanishOptions, 'action' | 'reason'>): void {
  rt.metrics.vanished.inc({ source, reason: options.reason }, count);
  rt.logger.warn(
    { source, skus: count, action: options.action, reason: options.reason, sample: sample.slice(0, 10).map((key) => targetLabel(key)) },
    `${count} SKU(s) vanished from source ${source} (${options.reason}): ${options.action}`,
  );
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
  // A person's confirm is counted and logged once by `confirmHeld`, whichever process runs it.
  if (options.confirmed || options.quiet) return queued;
  announceVanished(rt, source, items.length, items.slice(0, 10).map(({ key }) => key), options);
  return queued;
}

/** Held target keys read per Redis call and vanished per round. */
const CHUNK = 1000;

/** What `confirmHeld` did. */
export interface ConfirmReport {
  source: string;
  /** What was applied: the source's `vanished.action`, or `keep` when a person kept them. */
  action: VanishedAction;
  /** SKUs whose action was applied. */
  confirmed: number;
  /** The first of them. */
  sample: string[];
}

/**
 * Applies `action` to the SKUs the mass guard holds for `source`, a chunk at a time in Code order:
 * the source's action (`storesync inventory vanished --confirm`, `POST /admin/inventory/vanished/confirm`)
 * or `keep` (`--keep`, `POST /admin/inventory/vanished/keep`: recorded as vanished, kept by a person,
 * nothing written). A held SKU that came back since is no longer held (each diff replaces the held
 * set), so nothing is done for it. The count goes to Redis for the daemon's `storesync_vanished_total`
 * (this may be another process: the CLI).
 */
export async function confirmHeld(rt: InventoryRuntime, source: string, action: VanishedAction): Promise<ConfirmReport> {
  const diffState = new DiffState(rt.redis, rt.config.redis.prefix);
  const sample: string[] = [];
  let confirmed = 0;
  let after: string | undefined;
  for (let keys = await diffState.heldPage(source, CHUNK); keys.length > 0; keys = await diffState.heldPage(source, CHUNK, after)) {
    await vanish(rt, diffState, source, keys.map((key) => ({ key })), { action, reason: 'absent', confirmed: true });
    await diffState.releaseHeld(source, keys);
    await diffState.countConfirmed(source, 'absent', keys.length);
    confirmed += keys.length;
    sample.push(...keys.slice(0, 20 - sample.length).map((key) => targetLabel(key, rt.config.inventory.priceLists)));
    after = keys.at(-1);
  }
  rt.metrics.vanishedHeld.set({ source }, await diffState.heldCount(source));
  if (confirmed > 0) {
    const done = action === 'keep' ? 'kept by a person: recorded as vanished, nothing written' : `confirmed by a person: ${action}`;
    rt.logger.warn({ source, skus: confirmed, action, reason: 'absent', sample: sample.slice(0, 10) }, `${confirmed} held SKU(s) of source ${source} ${done}`);
  }
  rt.events.emit('inventory:vanished:confirmed', { source, skus: confirmed });
  return { source, action, confirmed, sample };
}

/** What the mass guard holds for a source (`storesync inventory vanished --source NAME`), one page of it. */
export interface HeldPage {
  source: string;
  /** What confirming would do. */
  action: VanishedAction;
  /** How many target keys are held in all. */
  held: number;
  /** When the diff that held them ran (ISO), or null when nothing is held. */
  since: string | null;
  /** The held targets of this page, in Code order (`SKU-1`, `SKU-1 (site 2)`). */
  skus: string[];
  /** The last Code of this page when more follow (the next page's `after`), else null. */
  next: string | null;
}

/** Which page of the held SKUs: the Codes after `after`, at most `limit` of them (each with all its held targets). */
export interface HeldPageOptions {
  after?: string;
  limit?: number;
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

/** What `eachHeld` calls: `head` once with the counts, then `page` with each chunk of held targets. */
export interface HeldVisitor {
  head(summary: Omit<HeldPage, 'skus' | 'next'>): void;
  page(labels: string[]): Promise<void> | void;
}

/**
 * Gives `visit` the held targets of `source`, a chunk at a time in Code order, from the Codes after
 * `options.after`, stopping once `options.limit` Codes were given (no limit: all of them); memory holds one
 * chunk, whatever the number held. Returns the summary with `next`, and `skus` empty.
 */
export async function eachHeld(deps: FlowDeps, source: string, options: HeldPageOptions, visit: HeldVisitor): Promise<HeldPage> {
  const action = actionOf(deps, source);
  const lists = deps.config.inventory.priceLists;
  const redis = deps.connect();
  try {
    const diffState = new DiffState(redis, deps.config.redis.prefix);
    const [held, since] = [await diffState.heldCount(source), await diffState.heldSince(source)];
    const head = { source, action, held, since: since === null ? null : new Date(since).toISOString() };
    visit.head(head);
    const summary = (next: string | null): HeldPage => ({ ...head, skus: [], next });
    let codes = 0;
    let last: string | undefined;
    let after = options.after === undefined ? undefined : pastTargetsOf(options.after);
    for (;;) {
      const keys = await diffState.heldPage(source, CHUNK, after);
      if (keys.length === 0) return summary(null);
      const taken: string[] = [];
      for (const key of keys) {
        const { code } = targetParts(key);
        if (code !== last) {
          // The page is full and another Code follows: it starts the next page.
          if (codes === options.limit) {
            if (taken.length > 0) await visit.page(taken);
            return summary(last ?? null);
          }
          codes += 1;
          last = code;
        }
        taken.push(targetLabel(key, lists));
      }
      await visit.page(taken);
      after = keys.at(-1);
    }
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** One page of what the mass guard holds for `source` (the admin route; the CLI streams with `eachHeld`). */
export async function heldPage(deps: FlowDeps, source: string, options: HeldPageOptions): Promise<HeldPage> {
  const skus: string[] = [];
  const summary = await eachHeld(deps, source, options, {
    head: () => undefined,
    page: (labels) => {
      skus.push(...labels);
    },
  });
  return { ...summary, skus };
}

/** Confirms what the mass guard holds for `source` (applies its action), with its own runtime. */
export async function confirmVanished(deps: FlowDeps, source: string): Promise<ConfirmReport> {
  return resolveHeld(deps, source, actionOf(deps, source));
}

/** Keeps what the mass guard holds for `source`: recorded as vanished, nothing written; with its own runtime. */
export async function keepVanished(deps: FlowDeps, source: string): Promise<ConfirmReport> {
  actionOf(deps, source);
  return resolveHeld(deps, source, 'keep');
}

async function resolveHeld(deps: FlowDeps, source: string, action: VanishedAction): Promise<ConfirmReport> {
  const rt = openInventoryRuntime(deps);
  try {
    return await confirmHeld(rt, source, action);
  } finally {
    await rt.close();
  }
}
