/**
 * Applies one shipment update to a store sale through the guard: an unknown status or a move out of a
 * final status is refused with a ValidationError (nothing sent; a failed job that is never retried),
 * fields already equal on the store are not sent, and an update older than one already applied is
 * skipped.
 */
import { ValidationError, type ValidationIssue, withContext } from '../../errors.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import { planUpdate, unknownStatusIssue } from './guard.js';
import type { FulfillmentRuntime } from './runtime.js';
import type { FulfillmentJobData, FulfillmentResult } from './types.js';

function refuse(rt: FulfillmentRuntime, data: FulfillmentJobData, issue: ValidationIssue): ValidationError {
  const error = new ValidationError([issue], 'shipment update refused');
  rt.metrics.jobs.inc({ queue: QUEUE_NAMES.fulfillment, outcome: 'rejected' });
  // The activity log warns of it (fulfillment:job:failed), within its flood limit.
  rt.logger.debug({ saleId: data.saleId, update: data.update, source: data.source, ref: data.ref }, error.message);
  return error;
}

/** Applies `data.update` to the sale; `attempts` is passed to the store client (1 in workers). */
export async function applyFulfillment(rt: FulfillmentRuntime, data: FulfillmentJobData, options: { attempts?: number } = {}): Promise<FulfillmentResult> {
  const call = options.attempts === undefined ? {} : { attempts: options.attempts };
  const settings = rt.config.fulfillment;
  const unknown = unknownStatusIssue(data.saleId, data.update, settings);
  if (unknown) throw refuse(rt, data, unknown);

  if (data.version !== undefined) {
    const applied = await rt.state.appliedVersion(data.saleId);
    if (applied !== null && applied > data.version) return { saleId: data.saleId, outcome: 'stale', changed: [] };
  }
  let sale;
  try {
    sale = await rt.store.sales.get(data.saleId, {}, call);
  } catch (error) {
    throw withContext(error, `sale ${data.saleId}: cannot read it from the store`);
  }
  const plan = planUpdate(sale, data.update, settings, data.force ?? false);
  if (plan.action === 'refuse') throw refuse(rt, data, plan.issue);
  if (plan.action === 'send') {
    try {
      // The complete update structure, built on the sale read above: a store that replaces instead of
      // merging keeps the observations and message the shipment does not touch.
      await rt.store.sales.change(data.saleId, data.update, { ...call, current: sale });
    } catch (error) {
      throw withContext(error, `sale ${data.saleId}: update not accepted`);
    }
    rt.logger.debug({ saleId: data.saleId, changed: plan.changed, source: data.source }, 'shipment update applied to the store');
  }
  if (data.version !== undefined) await rt.state.setAppliedVersion(data.saleId, data.version);
  return { saleId: data.saleId, outcome: plan.action === 'send' ? 'updated' : 'unchanged', changed: plan.action === 'send' ? plan.changed : [] };
}
