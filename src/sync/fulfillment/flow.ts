/**
 * The fulfillment flow, ERP → store: the producer role polls each shipment source on its schedule and
 * queues the updates; the worker role applies them to the store's sales through the guard. Started and
 * stopped by the flow lifecycle (../lifecycle.ts). Also `updateSale`, the same guarded update for one
 * sale outside the queue (CLI `storesync sales fulfil`).
 */
import type { Worker } from 'bullmq';

import { FULFILLMENT_FIELDS } from '../../erp/fields.js';
import { createSource } from '../../erp/index.js';
import type { TypedEmitter } from '../../events.js';
import type { Flow, FlowDeps, Role } from '../flow.js';
import { onePollAtATime, type PolledSource, polledSource, pollRuns, startFlow } from '../lifecycle.js';
import type { PollHistory } from '../poll-source.js';
import { forgetLogged, RedisBoundMemory } from '../redis-identity.js';
import { applyFulfillment } from './apply-update.js';
import { pollFulfillmentSource } from './producer.js';
import { type FulfillmentRuntime, openFulfillmentRuntime } from './runtime.js';
import type { FulfillmentEvents, FulfillmentPollReport, FulfillmentResult, FulfillmentUpdate } from './types.js';
import { startFulfillmentWorker } from './worker.js';

/** A running fulfillment flow. */
export interface FulfillmentFlow extends Flow {
  readonly events: TypedEmitter<FulfillmentEvents>;
  /** The flow's BullMQ workers (none in the producer role). */
  readonly workers: readonly Worker[];
  /** Polls one source now (as its cron tick would), on this instance. */
  poll(source: string): Promise<FulfillmentPollReport>;
}

/** Starts the producer (a cron task per enabled source), the worker, or both, as `role` says. */
export async function startFulfillmentFlow(deps: FlowDeps, { role }: { role: Role }): Promise<FulfillmentFlow> {
  // When each source's last complete poll began, for the life of the flow (bounds the next overlap);
  // dropped when Redis is no longer the one it was learned from (../redis-identity.ts).
  const histories = new Map<string, RedisBoundMemory<PollHistory>>();
  const serial = onePollAtATime();
  const pollWith = (rt: FulfillmentRuntime, sources: ReadonlyMap<string, PolledSource>) => (name: string): Promise<FulfillmentPollReport> => {
    const { source, limit, initialCursor } = polledSource('fulfillment', sources, name);
    return serial(name, async () => {
      let memory = histories.get(name);
      if (!memory) histories.set(name, (memory = new RedisBoundMemory<PollHistory>(() => ({}))));
      const history = await memory.current(rt.redis, deps.config.redis.prefix, (change) => forgetLogged(rt, 'fulfillment', name, change));
      return pollFulfillmentSource(rt, source, { limit, initialCursor, history });
    });
  };
  const flow = await startFlow<FulfillmentRuntime>({
    role,
    openRuntime: () => openFulfillmentRuntime(deps),
    sources: {
      configs: deps.config.fulfillment.sources.filter((source) => source.enabled),
      open: (sourceConfig, rt) => createSource(sourceConfig, { fields: FULFILLMENT_FIELDS, logger: rt.logger, now: rt.now }),
    },
    worker: (rt, connection) => startFulfillmentWorker(rt, connection),
    schedule: (rt, sources) =>
      pollRuns('fulfillment', sources, pollWith(rt, sources), (source, error) => {
        rt.logger.error({ source, err: error.message }, 'fulfillment poll failed; the cursor did not move');
        rt.events.emit('fulfillment:poll:failed', { source, error });
      }),
  });
  flow.rt.logger.info({ role, sources: [...flow.sources.keys()] }, 'fulfillment flow started');

  return {
    name: 'fulfillment',
    queues: [flow.rt.queue],
    events: flow.rt.events,
    workers: flow.workers,
    poll: pollWith(flow.rt, flow.sources),
    close: flow.close,
  };
}

/** Applies one update to one sale now, outside the queue (the same guard as the worker). */
export async function updateSale(deps: FlowDeps, saleId: number, update: FulfillmentUpdate, options: { force?: boolean } = {}): Promise<FulfillmentResult> {
  const rt = openFulfillmentRuntime(deps);
  try {
    return await applyFulfillment(rt, { saleId, update, force: options.force ?? false, source: 'cli' });
  } finally {
    await rt.close();
  }
}
