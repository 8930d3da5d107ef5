/**
 * `storesync inventory explain SKU` and `GET /admin/inventory/{sku}`: why the store shows what it
 * shows for a SKU. Everything is read, nothing written: the ERP's last value per field (source, cursor,
 * version), values still pending, the reservations (and whether each still counts), the safety stock,
 * the published figure with its formula, what the store last acknowledged and when, the SKU's jobs
 * and refused ERP rows, and the sources it vanished from (snapshot diff, deletions) or is held by.
 */
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';

import { ValidationError } from '../../errors.js';
import { Queue } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { FlowDeps } from '../flow.js';
import { type Allocation, appliesTo, describeAllocation, type ExplainedKit, explainKit, newestEntry, parseSkuReservations,placementOf, planStock, RESERVATION_MOVES_FIELD, RESERVATION_VERSION_FIELD, SAFETY_FIELD, safetyStockOf, type SiteFigure } from './listing/index.js';
import { DiffState } from './snapshot/index.js';
import { ACKED_AT_FIELD, InventoryState, type SkuState } from './state.js';
import { homeSiteOf, keyOf, type PriceList, targetLabel, targetParts } from './target-key.js';
import { type InventoryJobData, jobSkus, type PendingEntry } from './types.js';

/** Jobs of each state looked through for the SKU's (the most recent first). */
const JOB_SCAN = 1000;

/** One field's last ERP value. */
export interface ExplainedField {
  field: string;
  value: unknown;
  source: string;
  cursor: unknown;
  version: number;
  /** When storesync read it (ISO). */
  readAt: string;
  /** True while it waits to be sent. */
  pending: boolean;
}

/** One job of the SKU. */
export interface ExplainedJob {
  id: string;
  state: string;
  priority: number;
  attemptsMade: number;
  failedReason?: string;
  /** When it was added (ISO). */
  addedAt: string;
}

/** The answer. */
export interface SkuExplanation {
  sku: string;
  /** The target explained, as people read it: `SKU-1`, `SKU-1 (site 2, price list WHOLESALE)`. */
  target: string;
  /** The target's site, and reservations listed for this site only (the published figure counts every site's). */
  siteId: number | null;
  /** The target's price list (id); null: the default list. */
  priceListId: number | null;
  erp: ExplainedField[];
  reservations: Array<{ siteId: number; saleId: number; quantity: number; since: string; state: 'open' | 'booked'; bookedAt?: string; appliesToFigure: boolean }>;
  reservationVersion: number;
  safetyStock: { value: number; from: 'record' | 'config' };
  published: { erpStock: number; reserved: number; safetyStock: number; value: number; formula: string } | null;
  /**
   * With `inventory.sites`: how the stock is shared among the sites (`listing/allocation.ts`), every site's
   * figure and why; `lines` as `inventory explain` prints them. Null for a target without a site.
   */
  allocation: (Omit<Allocation, 'sites'> & { sites: SiteFigure[]; lines: string[] }) | null;
  store: { acknowledged: Record<string, unknown>; at: string | null; versions: Record<string, number> };
  /** The kit's components and figure, when the code is a kit (`inventory.kits`); then `published` is null. */
  kit: ExplainedKit | null;
  /** What the next job would do with the stock, given the state now. */
  nextStockWrite: number | null;
  jobs: ExplainedJob[];
  rejects: Array<{ id: string; reason: string; at: string }>;
  /**
   * Sources the SKU vanished from (gone from the snapshot, or named by the deletions query; per site
   * when the source names sites) and those whose mass guard holds it (`held`: nothing written yet).
   */
  vanished: ExplainedVanished[];
}

/** A SKU gone from a source. */
export interface ExplainedVanished {
  source: string;
  /** `SKU-1`, or `SKU-1 (site 2)` when the source names sites. */
  target: string;
  /** When storesync learned of it (ISO). */
  at: string;
  reason: 'absent' | 'deleted' | 'held';
  action: 'zero' | 'unpublish' | 'keep' | null;
  confirmed?: boolean;
}

const iso = (ms: number | undefined): string => new Date(ms ?? 0).toISOString();

/** Which target of the SKU to explain: its site and price list (by id or code); none: the default target. */
export interface ExplainOptions {
  siteId?: number;
  priceList?: string;
}

/** Explains a SKU's target with its own read-only connection; see the module comment. */
export async function explainSku(deps: FlowDeps, sku: string, options: ExplainOptions = {}): Promise<SkuExplanation> {
  const priceListId = resolvePriceList(deps.config.inventory.priceLists, options.priceList);
  const redis = deps.connect();
  try {
    return await explainWith(redis, deps, sku, { ...options, ...(priceListId === undefined ? {} : { priceListId }) });
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** The id of the price list named by `named` (its code, or its id), or a ValidationError naming the lists. */
export function resolvePriceList(lists: readonly PriceList[], named: string | undefined): number | undefined {
  if (named === undefined) return undefined;
  const found = lists.find((list) => list.code === named) ?? lists.find((list) => String(list.id) === named);
  if (found) return found.id;
  const known = lists.length === 0 ? 'none configured' : lists.map((list) => `${list.id}:${list.code}`).join(', ');
  throw new ValidationError([{ field: '--price-list', value: named, rule: `the id or code of a price list of inventory.priceLists (${known})` }], 'inventory explain');
}

async function explainWith(redis: Redis, deps: FlowDeps, sku: string, options: { siteId?: number; priceListId?: number }): Promise<SkuExplanation> {
  const { config } = deps;
  const inventoryState = new InventoryState(redis, config.redis.prefix, homeSiteOf(config));
  // With inventory.sites and no --site, the first site's target (the allocation shows every site's figure).
  const siteId = options.siteId ?? config.inventory.sites[0]?.siteId;
  let key = keyOf({ code: sku, ...(siteId === undefined ? {} : { siteId }), ...(options.priceListId === undefined ? {} : { priceListId: options.priceListId }) });
  let state = await inventoryState.read(key);
  // A site no record names is the default target's (records without SiteId go to store.siteId).
  if (options.siteId !== undefined && options.priceListId === undefined && isEmpty(state)) {
    const fallback = await inventoryState.read(sku);
    if (!isEmpty(fallback)) [key, state] = [sku, fallback];
  }
  const target = targetLabel(key, config.inventory.priceLists);
  const reservations = parseSkuReservations(state.reservations);
  const figure = newestEntry(state.erp.get('Stock'), state.pending.get('Stock')?.entry);
  const safetyEntry = state.erp.get(SAFETY_FIELD);
  const safetyStock = safetyStockOf(safetyEntry, config.inventory.safetyStock);
  const kit = await explainKit(redis, config, key, sku, figure?.value);
  const plan = kit ? undefined : planStock(state, false, config.inventory.safetyStock, placementOf(key, config.inventory));
  const computed = plan?.computed;
  // A kit's figure is sent when it differs from what the store acknowledged (listing/kits/kit-stock.ts).
  const kitWrite = kit?.figure !== undefined && kit.figure !== null && state.acked.get('Stock') !== kit.figure ? kit.figure : null;
  const allocation = computed?.allocation;
  const fields = new Set([...state.erp.keys(), ...state.pending.keys()]);
  const erp = [...fields].sort().map((field): ExplainedField => {
    const entry = newestEntry(state.erp.get(field), state.pending.get(field)?.entry) as PendingEntry;
    return {
      field,
      value: entry.value,
      source: entry.source,
      cursor: entry.cursor ?? null,
      version: entry.version,
      readAt: iso(entry.at),
      pending: state.pending.has(field),
    };
  });
  const { [ACKED_AT_FIELD]: ackedAt, ...acknowledged } = Object.fromEntries(state.acked);
  return {
    sku,
    target,
    siteId: siteId ?? null,
    priceListId: options.priceListId ?? null,
    erp,
    reservations: reservations.entries
      .filter((r) => siteId === undefined || r.siteId === siteId)
      .map((r) => ({
        siteId: r.siteId,
        saleId: r.saleId,
        quantity: r.quantity,
        since: iso(r.since),
        state: r.bookedAt === undefined ? 'open' : 'booked',
        ...(r.bookedAt === undefined ? {} : { bookedAt: iso(r.bookedAt) }),
        appliesToFigure: figure === undefined ? true : appliesTo(r, figure),
      })),
    reservationVersion: reservations.version,
    safetyStock: { value: safetyStock, from: safetyEntry !== undefined && safetyStock === safetyEntry.value ? 'record' : 'config' },
    published: computed
      ? {
          erpStock: computed.erpStock,
          reserved: computed.reserved,
          safetyStock: computed.safetyStock,
          value: computed.published,
          formula: allocation
            ? `site ${targetParts(key).siteId ?? ''} of the allocation below = ${computed.published}`
            : `max(0, ${computed.erpStock} − ${computed.reserved} − ${computed.safetyStock}) = ${computed.published}`,
        }
      : null,
    allocation: allocation ? { ...allocation, lines: describeAllocation(allocation) } : null,
    store: {
      acknowledged,
      at: typeof ackedAt === 'number' ? iso(ackedAt) : null,
      versions: Object.fromEntries([...state.applied].filter(([field]) => field !== RESERVATION_VERSION_FIELD && field !== RESERVATION_MOVES_FIELD)),
    },
    kit,
    nextStockWrite: kit ? kitWrite : typeof plan?.send?.entry.value === 'number' ? plan.send.entry.value : null,
    jobs: await skuJobs(redis, config.redis.prefix, key),
    rejects: await skuRejects(redis, config.redis.prefix, target),
    vanished: await skuVanished(redis, deps, sku),
  };
}

/** Where the SKU vanished or is held, per configured inventory source. */
async function skuVanished(redis: Redis, deps: FlowDeps, sku: string): Promise<ExplainedVanished[]> {
  const diffState = new DiffState(redis, deps.config.redis.prefix);
  const out: ExplainedVanished[] = [];
  for (const { name } of deps.config.inventory.sources) {
    const { vanished, held } = await diffState.entriesOf(name, sku);
    for (const [key, entry] of vanished) {
      out.push({ source: name, target: targetLabel(key), at: iso(entry.at), reason: entry.reason, action: entry.action, ...(entry.confirmed ? { confirmed: true } : {}) });
    }
    for (const [key, entry] of held) out.push({ source: name, target: targetLabel(key), at: iso(entry.at), reason: 'held', action: null });
  }
  return out;
}

/** A queue handle that writes nothing when opened. */
function readOnlyQueue(redis: Redis, prefix: string, name: string): Queue {
  return new Queue(name, { connection: redis, prefix, skipMetasUpdate: true });
}

async function describeJob(job: Job): Promise<ExplainedJob> {
  return {
    id: String(job.id),
    state: await job.getState(),
    priority: job.opts.priority ?? 0,
    attemptsMade: job.attemptsMade,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    addedAt: iso(job.timestamp),
  };
}

/**
 * The jobs that carry the SKU among the most recent of each state: waiting, running or delayed (a batch
 * names its first SKU only, so the data is searched) and failed (a failing SKU fails in a job of its own).
 */
async function skuJobs(redis: Redis, prefix: string, sku: string): Promise<ExplainedJob[]> {
  const queue = readOnlyQueue(redis, prefix, QUEUE_NAMES.inventory);
  try {
    const jobs: Job[] = [];
    for (const state of ['active', 'prioritized', 'waiting', 'delayed', 'failed'] as const) {
      for (const job of await queue.getJobs([state], 0, JOB_SCAN - 1)) {
        if (job && jobSkus(job.data as InventoryJobData).includes(sku)) jobs.push(job);
      }
    }
    return await Promise.all(jobs.map(describeJob));
  } finally {
    await queue.close();
  }
}

/** Refused ERP rows of the SKU among the most recent. */
async function skuRejects(redis: Redis, prefix: string, label: string): Promise<Array<{ id: string; reason: string; at: string }>> {
  const queue = readOnlyQueue(redis, prefix, QUEUE_NAMES.inventoryRejects);
  try {
    const failed = await queue.getFailed(0, JOB_SCAN - 1);
    return failed.filter((job) => job.name === `reject:${label}`).map((job) => ({ id: String(job.id), reason: job.failedReason, at: iso(job.finishedOn ?? job.timestamp) }));
  } finally {
    await queue.close();
  }
}

/** True when nothing was ever recorded for the target. */
function isEmpty(state: SkuState): boolean {
  return state.pending.size === 0 && state.erp.size === 0 && state.applied.size === 0 && state.acked.size === 0;
}
