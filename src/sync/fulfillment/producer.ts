/**
 * The fulfillment producer: one poll of one ERP shipment source. Records name the sale by `SaleId`, or
 * by `ExternalReference` (+ `SiteId`, default `store.siteId`) resolved through the store; several
 * records of one sale in a batch are merged in cursor order. The cursor moves only after the jobs are
 * queued, so a crash re-reads the same records, and re-read updates land on the same job id.
 */
import { createHash } from 'node:crypto';

import { cursorToVersion } from '../../erp/cursor.js';
import type { ChangeBatch, ChangeSource, SourceRecord } from '../../erp/types.js';
import { formatIssue, type ValidationIssue } from '../../errors.js';
import { pollChangeSource, type PollOptions } from '../poll-source.js';
import type { FulfillmentRuntime } from './runtime.js';
import { FULFILLMENT_UPDATE_FIELDS, type FulfillmentJobData, type FulfillmentPollReport, type FulfillmentUpdate } from './types.js';

/** The job id of an update: the same update of the same sale is queued once. */
export function fulfillmentJobId(saleId: number, update: FulfillmentUpdate, force = false): string {
  const canonical = JSON.stringify([FULFILLMENT_UPDATE_FIELDS.map((field) => update[field] ?? null), force]);
  return `fulfil-${saleId}-${createHash('sha1').update(canonical).digest('hex').slice(0, 16)}`;
}

/** The update fields a record carries. */
export function updateOf(fields: Record<string, unknown>): FulfillmentUpdate {
  const update: FulfillmentUpdate = {};
  if (typeof fields.Status === 'number') update.Status = fields.Status;
  for (const field of ['StatusText', 'TrackingCode', 'Obeservations'] as const) {
    if (typeof fields[field] === 'string') update[field] = fields[field];
  }
  return update;
}

/** A positive integer SaleId, when the record names its sale that way. */
function saleIdField(record: SourceRecord): number | undefined {
  const { SaleId } = record.fields;
  return typeof SaleId === 'number' && Number.isInteger(SaleId) && SaleId > 0 ? SaleId : undefined;
}

/**
 * Why a shipment record cannot be queued, short of looking its ExternalReference up on the store: it
 * names no sale, or carries no update field. Empty when it may be queued.
 */
export function shipmentRecordIssues(record: SourceRecord): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const { SaleId, ExternalReference } = record.fields;
  if (saleIdField(record) === undefined && (typeof ExternalReference !== 'string' || ExternalReference === '')) {
    issues.push({ record: record.ref, field: 'SaleId', value: SaleId, rule: 'a sale id, or ExternalReference (+ SiteId)' });
  }
  if (Object.keys(updateOf(record.fields)).length === 0) {
    issues.push({ record: record.ref, field: 'Status', value: undefined, rule: 'at least one of Status, StatusText, TrackingCode, Obeservations' });
  }
  return issues;
}

/** Resolves the sale id of a record that passed `shipmentRecordIssues`, or returns why it cannot be. */
async function saleIdOf(rt: FulfillmentRuntime, record: SourceRecord, cache: Map<string, number | null>): Promise<number | ValidationIssue> {
  const saleId = saleIdField(record);
  if (saleId !== undefined) return saleId;
  const { ExternalReference, SiteId } = record.fields;
  if (typeof ExternalReference !== 'string') throw new Error('saleIdOf: a record without a sale key was not refused first');
  const siteId = typeof SiteId === 'number' ? SiteId : rt.config.store.siteId;
  const key = `${siteId ?? ''}:${ExternalReference}`;
  if (!cache.has(key)) {
    const sales = await rt.store.sales.list({ externalReference: ExternalReference, ...(siteId === undefined ? {} : { siteId }) });
    cache.set(key, sales.length === 1 ? sales[0]!.Id : null);
  }
  const id = cache.get(key);
  return id ?? { record: record.ref, field: 'ExternalReference', value: ExternalReference, rule: 'the reference of exactly one store sale' };
}

/** Resolves, merges and queues one batch; returns how many jobs were added and records refused. */
async function queueBatch(rt: FulfillmentRuntime, source: string, batch: ChangeBatch): Promise<{ queued: number; rejected: number }> {
  const readAt = rt.now();
  const issues: ValidationIssue[][] = batch.rejected.map((r) => r.issues);
  const bySale = new Map<number, FulfillmentJobData>();
  const cache = new Map<string, number | null>();
  for (const record of batch.records) {
    const refused = shipmentRecordIssues(record);
    if (refused.length > 0) {
      issues.push(refused);
      continue;
    }
    const saleId = await saleIdOf(rt, record, cache);
    if (typeof saleId !== 'number') {
      issues.push([saleId]);
      continue;
    }
    const update = updateOf(record.fields);
    const version = cursorToVersion(record.cursor) ?? readAt;
    const previous = bySale.get(saleId);
    bySale.set(saleId, {
      saleId,
      update: { ...previous?.update, ...update },
      version: Math.max(version, previous?.version ?? version),
      source,
      ref: record.ref,
    });
  }
  await rt.queue.addBulk(
    [...bySale.values()].map((data) => ({ name: `fulfil:${data.saleId}`, data, opts: { jobId: fulfillmentJobId(data.saleId, data.update) } })),
  );
  for (const recordIssues of issues) {
    rt.metrics.erpRecordsRejected.inc({ source, reason: recordIssues[0]?.rule ?? 'invalid' });
    const reason = recordIssues.map(formatIssue).join('; ');
    rt.logger.debug({ source }, `shipment record refused: ${reason}`);
    rt.events.emit('fulfillment:record:refused', { source, reason });
  }
  return { queued: bySale.size, rejected: issues.length };
}

/** Polls `source` until it returns a short batch (bounded); returns what was read, refused and queued. */
export async function pollFulfillmentSource(rt: FulfillmentRuntime, source: ChangeSource, options: PollOptions): Promise<FulfillmentPollReport> {
  const report = await pollChangeSource(source, options, {
    flow: 'fulfillment',
    cursors: rt.state.cursors,
    metrics: rt.metrics,
    now: rt.now,
    queueBatch: (batch) => queueBatch(rt, source.name, batch),
  });
  rt.events.emit('fulfillment:poll:done', report);
  return report;
}
