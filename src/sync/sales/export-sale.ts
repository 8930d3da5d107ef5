/**
 * The heart of the sales flow: export a sale to the ERP, record it, then acknowledge it on the store.
 * The Redis record is written after the export and before the acknowledgement, so a failed or killed
 * acknowledgement is retried on its own without a second export; a kill between the export and the
 * record is covered by the sink's idempotency (same key, same file, same Idempotency-Key).
 */
import { storeInstant } from '../../erp/sinks/sale-rows.js';
import { withContext } from '../../errors.js';
import type { Sale } from '../../store/schemas/index.js';
import { componentSale } from '../inventory/listing/index.js';
import { ackChange } from './ack.js';
import type { SalesRuntime } from './runtime.js';
import type { SaleKey } from './sale-state.js';
import type { SaleOutcome } from './types.js';

/** Options of one export run. */
export interface ExportRunOptions {
  /** Export even if the state says exported; an acknowledged sale is not acknowledged again. */
  force?: boolean;
  /** Attempts inside the store client (1 in BullMQ workers, which retry with their own backoff). */
  attempts?: number;
}

/** Refreshes the age of the oldest sale not yet acknowledged. */
export async function updatePendingGauge(rt: SalesRuntime): Promise<void> {
  const oldest = await rt.state.oldestPending();
  rt.metrics.oldestUnacknowledgedSale.set(oldest === null ? 0 : Math.max(0, (rt.now() - oldest) / 1000));
}

/**
 * The sale as the ERP gets it: as sold, or with `sales.kits.export: components` each kit line replaced
 * by its components (listing/kits/sale-lines.ts). Still one sale under its own key, so the sinks'
 * idempotency holds: a repeated export of it is the no-op it always was.
 */
async function saleForErp(rt: SalesRuntime, sale: Sale, key: SaleKey): Promise<Sale> {
  if (rt.config.sales.kits.export !== 'components' || !rt.kits) return sale;
  const { sale: exported, unresolved } = await componentSale(sale, rt.kits);
  for (const kit of unresolved) rt.logger.warn({ ...key, code: kit.code }, `kit line exported as sold: ${kit.reason}`);
  return exported;
}

/** Exports (unless already exported) and acknowledges (unless disabled or done) one sale. */
export async function exportSale(rt: SalesRuntime, key: SaleKey, options: ExportRunOptions = {}): Promise<SaleOutcome> {
  const call = options.attempts === undefined ? {} : { attempts: options.attempts };
  const label = `sale ${key.siteId}-${key.saleId}`;
  const record = await rt.state.get(key);
  const outcome: SaleOutcome = { ...key, erpRef: record?.erpRef ?? null, exported: false, acked: false };
  if (record?.state === 'acked' && !options.force) return outcome;

  let erpRef = record?.erpRef;
  let createdAt: number | null = null;
  const readSale = async (): Promise<Sale> => {
    try {
      return await rt.store.sales.get(key.saleId, {}, call);
    } catch (error) {
      throw withContext(error, `${label}: cannot read it from the store`);
    }
  };
  if (!record || options.force) {
    const sale = await readSale();
    createdAt = storeInstant(sale.CreationDate, rt.config.store.timeZone)?.getTime() ?? null;
    const result = await rt.sink.export(await saleForErp(rt, sale, key), key.siteId);
    erpRef = result.erpRef;
    await rt.state.markExported(key, erpRef, rt.now());
    outcome.exported = result.created;
    outcome.erpRef = erpRef;
    rt.events.emit('sales:exported', { ...key, erpRef, created: result.created });
    rt.logger.debug({ ...key, erpRef, created: result.created, sink: rt.sink.kind }, 'sale exported to the ERP');
  }
  // A forced re-export of an acknowledged sale must not pull its store status back to the ack status.
  if (record?.state === 'acked' || erpRef === undefined) return outcome;

  if (!rt.config.sales.ack.enabled) {
    await rt.state.removePending(key);
    await updatePendingGauge(rt);
    return outcome;
  }
  // Read again right before the write, even after this run's export read it: the complete update
  // structure carries the current tracking code, observations and message, and a shipment may have
  // changed them while the ERP took the sale. The same read tells whether an earlier run, killed after
  // the store took the acknowledgement but before it was recorded, already wrote it (an empty change).
  const current = await readSale();
  const change = ackChange(rt.config.sales.ack, current, {
    saleId: key.saleId,
    siteId: key.siteId,
    erpRef,
    pulledStatuses: rt.config.sales.pull.statuses,
  });
  if (Object.keys(change).length > 0) {
    try {
      await rt.store.sales.change(key.saleId, change, { ...call, current });
    } catch (error) {
      throw withContext(error, `${label}: exported as ${erpRef} but not acknowledged`);
    }
  }
  const since = createdAt ?? (await rt.state.pendingSince(key));
  const ackedAt = rt.now();
  await rt.state.markAcked(key, ackedAt);
  outcome.acked = true;
  if (since !== null) rt.metrics.syncLag.observe({ flow: 'sales' }, Math.max(0, (ackedAt - since) / 1000));
  rt.events.emit('sales:acked', { ...key, erpRef });
  rt.logger.debug({ ...key, erpRef }, 'sale acknowledged on the store');
  await updatePendingGauge(rt);
  return outcome;
}
