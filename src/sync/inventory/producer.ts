/**
 * The producer side: one poll of one ERP source. The cursor is read before the source, the changed
 * records are checked against the store's rules, merged into the pending state and queued, and only
 * once every add has resolved is the cursor advanced and the source told to commit (CSV files move).
 * A crash anywhere before that re-reads the same records next time, which is harmless: merging the
 * same version twice changes nothing and a SKU has at most one waiting job.
 */
import { createHash } from 'node:crypto';

import { cursorToVersion, isTimestampCursor } from '../../erp/cursor.js';
import type { ChangeBatch, ChangeSource, SourceRecord } from '../../erp/types.js';
import { formatIssue, type ValidationIssue } from '../../errors.js';
import type { FailedEntry } from '../../queue/failed-job-log.js';
import { validateInventoryUpdate } from '../../store/validation.js';
import type { DeliveredRecord, DeliveredWindow } from '../delivered-window.js';
import { batchRows } from '../drain-source.js';
import { pollChangeSource, type PollOptions } from '../poll-source.js';
import { enqueueSkus } from './enqueue.js';
import { localFieldIssues, storeFields } from './listing/index.js';
import type { InventoryRuntime } from './runtime.js';
import { codeIssues, type PriceList, priceListOf, siteIdsOf, siteIssues, splitByTarget, targetKey, targetLabel } from './target-key.js';
import type { PendingEntry, PollReport } from './types.js';

/** A record ready to merge (one part per target it names; `sku` names the record's target), or the reason it is refused. */
type Checked = { sku: string; targets: Array<{ sku: string; entries: Record<string, PendingEntry> }> } | { reject: FailedEntry; issues: ValidationIssue[] };

/** Polls `source` until it returns a short batch (bounded); returns what was read, refused and queued. */
export async function pollSource(
  rt: InventoryRuntime,
  source: ChangeSource,
  options: PollOptions & {
    /** What this source's overlap window already delivered: re-read records of it are skipped. */
    window?: DeliveredWindow;
  },
): Promise<PollReport> {
  // A SKU changed in several batches of one poll has one job: the report counts distinct SKUs.
  const queued = new Set<string>();
  // A full batch is a backlog: the next read follows at once, and the store slots (shared by the SKUs of
  // every active job) stay busy without spreading. From the first full batch with changes on, the poll
  // queues jobs of `batchSize` instead of spreading each batch over `concurrency` jobs: BullMQ's and the
  // locks' commands are paid per job (issue 27). A short first batch (a few changes) is spread as before.
  let backlog = false;
  // Every value of this poll was read after this instant, none before (listing/reservations.ts).
  const observedAt = rt.now();
  // The window recognises re-read rows before they are normalised (`KnownRows`).
  const report = await pollChangeSource(source, options.window ? { ...options, known: options.window } : options, {
    flow: 'inventory',
    cursors: rt.state.cursors,
    metrics: rt.metrics,
    now: rt.now,
    queueBatch: async (batch) => {
      const before = queued.size;
      const full = batchRows(batch) >= options.limit;
      const { skus, rejected } = await queueBatch(rt, source.name, batch, observedAt, options.window, backlog || full);
      // A full batch of rows the window already delivered (the overlap's re-reads) is no backlog.
      backlog ||= full && skus.length > 0;
      for (const sku of skus) queued.add(sku);
      return { queued: queued.size - before, rejected };
    },
  });
  const cursorVersion = isTimestampCursor(report.cursor) ? cursorToVersion(report.cursor) : null;
  if (cursorVersion !== null) options.window?.forgetBefore(cursorVersion);
  rt.logger.debug({ ...report }, 'inventory poll done');
  rt.events.emit('inventory:poll:done', report);
  return report;
}

/**
 * Checks, merges and queues one batch; refused records become failed entries of the rejects queue. Its
 * SKUs are spread over `inventory.concurrency` jobs, or go in jobs of `batchSize` when `backlog`.
 */
async function queueBatch(
  rt: InventoryRuntime,
  source: string,
  batch: ChangeBatch,
  observedAt: number,
  window: DeliveredWindow | undefined,
  backlog: boolean,
): Promise<{ skus: string[]; rejected: number }> {
  const readAt = rt.now();
  const good: Array<{ sku: string; entries: Record<string, PendingEntry> }> = [];
  const rejects: Array<{ reject: FailedEntry; issues: ValidationIssue[] }> = [];
  const delivered: DeliveredRecord[] = [];
  const sites = siteIdsOf(rt.config.inventory);
  for (const record of batch.records) {
    const identity = window && deliveredIdentity(record, rt.config.inventory.priceLists);
    if (identity) {
      // Re-read inside the overlap window and already merged and queued: nothing to do again.
      if (window?.has(identity)) continue;
      delivered.push(identity);
    }
    const checked = checkRecord(record, source, readAt, observedAt, rt.config.inventory.priceLists, sites);
    if ('reject' in checked) {
      rejects.push(checked);
      continue;
    }
    // Fields the source refused (a fractional Stock under stockRounding: reject): the row counts as
    // refused, and its other fields still flow.
    if (record.refused) rejects.push({ issues: record.refused, reject: rejectEntry(checked.sku, source, record.ref, record.fields, record.refused) });
    for (const target of checked.targets) if (Object.keys(target.entries).length > 0) good.push(target);
  }
  for (const record of batch.rejected) {
    const name = record.issues[0]?.record ?? record.ref;
    rejects.push({ issues: record.issues, reject: rejectEntry(name, source, record.ref, undefined, record.issues) });
  }
  // Merge before adding: a job always finds its values, whichever instance runs it.
  const priorities = await rt.state.merge(good);
  const skus = good.map((item) => item.sku);
  await enqueueSkus(rt.queue, skus, { priorities, batchSize: rt.config.inventory.batchSize, spread: backlog ? 1 : rt.config.inventory.concurrency });
  await recordRejects(rt, source, rejects);
  window?.add(delivered);
  return { skus, rejected: rejects.length };
}

/** The identity a window remembers a record by; only timestamp cursors are re-read by an overlap. */
function deliveredIdentity(record: SourceRecord, lists: readonly PriceList[]): DeliveredRecord | undefined {
  const version = isTimestampCursor(record.cursor) ? cursorToVersion(record.cursor) : null;
  // Two rows of one Code at one version (two sites, two price lists) are two records.
  const key = targetKey(record, lists);
  if (version === null || key === undefined) return undefined;
  return record.rowKey === undefined ? { key, version, fields: record.fields } : { key, version, fields: record.fields, rowKey: record.rowKey, cursor: record.cursor };
}

/**
 * Why the store would refuse a record's values, or its target is not one of the store's (a price list
 * not in `lists`); each issue names the SKU, field, value and rule. Empty when it may be queued.
 */
export function inventoryRecordIssues(record: SourceRecord, lists: readonly PriceList[] = [], sites: readonly number[] = []): ValidationIssue[] {
  const code = typeof record.fields.Code === 'string' ? record.fields.Code : undefined;
  // SafetyStock is storesync's own field: the store never sees it, storesync checks it.
  const issues = [...validateInventoryUpdate({ InternalId: 0, ...storeFields(record.fields) }, code ?? record.ref), ...localFieldIssues(record, code)];
  if (code !== undefined) issues.push(...codeIssues(code, `SKU ${code}`));
  const list = priceListOf(record.fields, lists, code === undefined ? record.ref : `SKU ${code}`);
  if (list !== undefined && !('id' in list)) issues.push(list);
  issues.push(...siteIssues(record.fields, sites, code === undefined ? record.ref : `SKU ${code}`));
  if (code === undefined && issues.length === 0) return [{ record: record.ref, field: 'Code', value: record.fields.Code, rule: 'required' }];
  return issues;
}

/** Validates a record as the store would and turns its fields into pending entries. */
function checkRecord(record: SourceRecord, source: string, readAt: number, observedAt: number, lists: readonly PriceList[], sites: readonly number[]): Checked {
  const code = typeof record.fields.Code === 'string' ? record.fields.Code : undefined;
  const found = inventoryRecordIssues(record, lists, sites);
  if (code === undefined || found.length > 0) {
    // Refused whole: the fields the source already refused are part of the reason.
    const issues = [...(record.refused ?? []), ...found];
    // Named after its target (`SKU-1 (site 2)`): `inventory explain` finds it there.
    return { issues, reject: rejectEntry(code === undefined ? record.ref : targetLabel(targetKey(record, lists) ?? code, lists), source, record.ref, record.fields, issues) };
  }
  const { cursor } = record;
  const cursorVersion = cursorToVersion(cursor);
  const changedAt = isTimestampCursor(cursor) && cursorVersion !== null ? cursorVersion : undefined;
  const targets = splitByTarget(code, record.fields, lists, sites).map(({ key, fields }) => {
    const entries: Record<string, PendingEntry> = {};
    for (const [field, value] of Object.entries(fields)) {
      if (field === 'Code') continue;
      entries[field] = {
        value,
        // A cursor without an order (opaque text, none) is versioned by when it was read.
        version: cursorVersion ?? readAt,
        at: readAt,
        source,
        observedAt,
        ...(cursor === null ? {} : { cursor }),
        ...(changedAt === undefined ? {} : { changedAt }),
      };
    }
    return { sku: key, entries };
  });
  // The label is needed only to name a partial refusal: the common path does not build it.
  return { sku: record.refused ? targetLabel(targetKey(record, lists) ?? code, lists) : code, targets };
}

function rejectEntry(
  name: string,
  source: string,
  ref: string,
  fields: Record<string, unknown> | undefined,
  issues: readonly ValidationIssue[],
): FailedEntry {
  // SQL and HTTP refs start with the source's name and name the row's Code; CSV refs name neither.
  const where = ref.startsWith(`${source} `) ? ref : `${source} ${ref}`;
  const reason = `${where}: ${issues.map((issue) => formatIssue(issue.record !== undefined && where.includes(issue.record) ? { ...issue, record: undefined } : issue)).join('; ')}`;
  return {
    // The same bad row read again (overlap window, next poll) is the same refusal.
    id: `reject-${createHash('sha256').update(`${source}\n${reason}`).digest('hex').slice(0, 32)}`,
    name: `reject:${name}`,
    data: { sku: name, source, ref, ...(fields ? { fields } : {}), issues },
    reason,
  };
}

/** Keeps refused records visible (failed jobs), counted and told (the activity log warns), each refusal once. */
async function recordRejects(
  rt: InventoryRuntime,
  source: string,
  rejects: ReadonlyArray<{ reject: FailedEntry; issues: readonly ValidationIssue[] }>,
): Promise<void> {
  if (rejects.length === 0) return;
  const added = new Set(await rt.rejects.record(rejects.map((r) => r.reject)));
  for (const { reject, issues } of rejects) {
    if (!added.has(reject)) continue;
    rt.metrics.erpRecordsRejected.inc({ source, reason: issues[0]?.rule ?? 'invalid' });
    const sku = String(reject.data.sku);
    rt.logger.debug({ source, sku }, `ERP record refused: ${reject.reason}`);
    rt.events.emit('inventory:record:refused', { source, sku, reason: reject.reason });
  }
}
