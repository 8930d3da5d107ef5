/**
 * The daemon: the flows for a role (producer: cron producers; worker: BullMQ workers; all: both), the
 * control queue, and the HTTP server (every role), sharing one store client, one metrics registry
 * and Redis connections. `close()` shuts down gracefully: producers stop, workers get
 * `shutdown.timeoutMs` to finish before their jobs are returned, connections close.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Config } from './config/schema.js';
import type { Logger } from './log.js';
import { Metrics } from './metrics.js';
import { ActivityLog } from './ops/activity-log.js';
import { Readiness } from './ops/health.js';
import { DASHBOARD_PATH, type HttpServer, startHttpServer } from './ops/http-server.js';
import { collectQueueDepth } from './ops/queue-depth.js';
import { checkEvictionPolicy } from './ops/redis-monitor.js';
import { RedisOutage } from './ops/redis-outage.js';
import { WorkerWatchdog } from './ops/worker-watchdog.js';
import { createRedis, describeRedis, QUEUE_NAMES, redisSecrets } from './queue/connection.js';
import { MasterWatch } from './queue/master-watch.js';
import { diagnoseRedis } from './queue/redis-diagnosis.js';
import { redactText, registerSecret } from './secrets.js';
import { StoreClient } from './store/client.js';
import { storeLoginGate } from './store/redis-login-gate.js';
import { storeRateLimiter } from './store/redis-request-limiter.js';
import { flowActions } from './sync/control/flow-actions.js';
import { type ControlActions, type ControlFlow, startControlFlow } from './sync/control/index.js';
import type { Flow, FlowDeps, Role } from './sync/flow.js';
import { type FulfillmentFlow, startFulfillmentFlow } from './sync/fulfillment/index.js';
import { confirmVanished, explainSku, heldPage, type InventoryFlow, keepVanished, markSalesProcessed, startInventoryFlow } from './sync/inventory/index.js';
import { type SalesFlow, startSalesFlow } from './sync/sales/index.js';
import { pullSiteId } from './sync/sales/runtime.js';
import { startedUp } from './v8-flags.js';

/** What the daemon is built from; everything but the config and the logger has a default. */
export interface DaemonDeps {
  config: Readonly<Config>;
  logger: Logger;
  /** Defaults to a new registry with process metrics. */
  metrics?: Metrics;
  /** Defaults to a client built from `config.store`; a client passed in is not closed by the daemon. */
  store?: StoreClient;
  now?: () => number;
  /** Names this process's workers in BullMQ (host:pid); see FlowDeps.instance. */
  instance?: string;
  /** What control jobs run; defaults to the inventory reconcile and the sales pull. */
  controlActions?: ControlActions;
}

/** A running daemon. */
export interface Daemon {
  readonly role: Role;
  /** Base URL of the HTTP server. */
  readonly url: string;
  readonly metrics: Metrics;
  readonly store: StoreClient;
  readonly flows: readonly Flow[];
  readonly control: ControlFlow;
  readonly inventory: InventoryFlow;
  readonly sales: SalesFlow;
  readonly fulfillment: FulfillmentFlow;
  readonly watchdog: WorkerWatchdog;
  /** Notices a new Redis master behind the connections (counted in storesync_redis_failovers_total). */
  readonly masterWatch: MasterWatch;
  /** Stops everything; resolves when all is closed. Safe to call twice. */
  close(): Promise<void>;
}

/** Starts the daemon for `role`. */
export async function startDaemon(deps: DaemonDeps, options: { role: Role }): Promise<Daemon> {
  const { config } = deps;
  const { role } = options;
  const logger = deps.logger.child({ component: 'daemon' });
  const metrics = deps.metrics ?? new Metrics();
  for (const secret of redisSecrets(config.redis)) registerSecret(secret);

  // One account of a Redis outage (start, once per summary interval, end) instead of a line per connection and worker.
  const outage = new RedisOutage({
    logger: deps.logger.child({ component: 'redis' }),
    diagnose: (lastError) => diagnoseRedis(config.redis, lastError),
    intervalMs: config.log.summaryIntervalMs,
  });
  const watchdog = new WorkerWatchdog({ logger });
  const masterWatch = new MasterWatch(config.redis.prefix);
  masterWatch.onFailover(({ from, to }) => {
    metrics.redisFailovers.inc();
    logger.warn({ fromRunId: from.runId, toRunId: to.runId, fromReplId: from.replId, toReplId: to.replId }, 'Redis master changed (failover or restart)');
  });
  const connections = new Set<Redis>();
  const connect = (): Redis => {
    const connection = createRedis(config.redis);
    connections.add(connection);
    connection.once('end', () => connections.delete(connection));
    outage.track(connection);
    watchdog.watchConnection(connection);
    masterWatch.track(connection);
    return connection;
  };
  const ownStore = deps.store === undefined;
  // The request budget (store.rateLimit) and the login gate (store.maxLoginsPerMinute) share one connection.
  let storeRedis: Redis | undefined;
  const storeConnection = (): Redis => (storeRedis ??= connect());
  // One request budget for every flow of every process sharing the prefix (store.rateLimit).
  const limiter = ownStore ? storeRateLimiter(config.store, config.redis.prefix, storeConnection) : undefined;
  // One login at a time and a login budget across those processes: a refused password never floods the store.
  const loginGate = ownStore ? storeLoginGate(config.store, config.redis.prefix, storeConnection) : undefined;
  const store =
    deps.store ??
    new StoreClient({
      config: config.store,
      logger: deps.logger,
      metrics,
      ...(deps.now ? { now: deps.now } : {}),
      ...(limiter ? { limiter } : {}),
      ...(loginGate ? { loginGate } : {}),
    });
  // Health checks must fail fast while Redis is down instead of queueing the PING until it is back.
  const health = createRedis(config.redis, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  outage.watch(health);
  masterWatch.track(health);
  // storesync_redis_up follows the health connection: it does not queue, so it is down as soon as Redis is.
  metrics.redisUp.set(0);
  health.on('ready', () => metrics.redisUp.set(1));
  for (const event of ['close', 'reconnecting', 'end']) health.on(event, () => metrics.redisUp.set(0));
  health.once('ready', () => void checkEvictionPolicy(health, logger));

  const flowDeps: FlowDeps = {
    config,
    connect,
    store,
    logger: deps.logger,
    metrics,
    masterWatch,
    redisErrors: outage,
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.instance ? { instance: deps.instance } : {}),
  };
  const flows: Flow[] = [];
  // What the flows do, as lines an operator reads (polls, failures for good, a summary per interval).
  const activity = new ActivityLog({ logger: deps.logger.child({ component: 'activity' }), summaryIntervalMs: config.log.summaryIntervalMs });
  let http: HttpServer | undefined;
  let stopCollecting: (() => void) | undefined;
  let closing: Promise<void> | undefined;

  const close = (): Promise<void> => {
    closing ??= (async () => {
      watchdog.stop();
      const timeoutMs = config.shutdown.timeoutMs;
      const results = await Promise.allSettled(flows.map((flow) => flow.close(timeoutMs)));
      results.forEach((result, i) => {
        if (result.status === 'rejected') logger.error({ flow: flows[i]?.name, err: result.reason }, 'flow did not close cleanly');
      });
      activity.close();
      await http?.close();
      stopCollecting?.();
      if (ownStore) await store.close();
      // Closing the connections is no outage.
      outage.close();
      for (const connection of [...connections, health]) connection.disconnect();
      logger.info('storesync stopped');
    })();
    return closing;
  };

  try {
    const control = await startControlFlow(flowDeps, { role, actions: deps.controlActions ?? flowActions(flowDeps) });
    flows.push(control);
    const dataFlows = await startFlows(flowDeps, role, flows);
    activity.watchInventory(dataFlows.inventory.events);
    activity.watchSales(dataFlows.sales.events);
    activity.watchFulfillment(dataFlows.fulfillment.events);
    for (const flow of flows) for (const worker of flow.workers ?? []) watchdog.watch(worker);

    const queues = uniqueQueues(flows);
    // A queue without an `error` listener prints every failed reconnect; the outage is reported once.
    for (const queue of queues) {
      queue.on('error', (error) => {
        if (!outage.absorb('queues', error)) logger.debug({ queue: queue.name, err: error }, 'queue error');
      });
    }
    stopCollecting = collectQueueDepth(metrics, queues, { logger });
    http = await startHttpServer({
      config,
      logger: deps.logger,
      metrics,
      // The session's hash, not a login per probe: probes take nothing from store.maxLoginsPerMinute.
      readiness: new Readiness({ redis: health, store: { login: () => store.authenticate() }, explainRedis: (error) => outage.explain(error) }),
      queues,
      control: { queueName: QUEUE_NAMES.control, enqueue: (data) => control.enqueue(data) },
      inventory: {
        explain: (sku, explainOptions) => explainSku(flowDeps, sku, explainOptions),
        markProcessed: (request) => markSalesProcessed(flowDeps, request),
        heldPage: (source, options) => heldPage(flowDeps, source, options),
        confirmVanished: (source) => confirmVanished(flowDeps, source),
        keepVanished: (source) => keepVanished(flowDeps, source),
        defaultSiteId: pullSiteId(config),
      },
    });
    logger.info(
      {
        role,
        http: http.url,
        dashboard: `${http.url}${DASHBOARD_PATH}`,
        redis: describeRedis(config.redis),
        prefix: config.redis.prefix,
        store: redactText(config.store.baseUrl),
        flows: flows.map((flow) => flow.name),
      },
      'storesync started',
    );
    // Its young generation may grow from now on, while it syncs (v8-flags.ts).
    startedUp();
    const url = http.url;
    return { role, url, metrics, store, flows, control, ...dataFlows, watchdog, masterWatch, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/** The data flows by name. */
export interface DataFlows {
  inventory: InventoryFlow;
  sales: SalesFlow;
  fulfillment: FulfillmentFlow;
}

/** Starts the data flows for `role`, one after the other; each is added to `started` at once so that a failing start closes the others. */
async function startFlows(deps: FlowDeps, role: Role, started: Flow[]): Promise<DataFlows> {
  const inventory = await startInventoryFlow(deps, { role });
  started.push(inventory);
  const sales = await startSalesFlow(deps, { role });
  started.push(sales);
  const fulfillment = await startFulfillmentFlow(deps, { role });
  started.push(fulfillment);
  return { inventory, sales, fulfillment };
}

function uniqueQueues(flows: readonly Flow[]): Queue[] {
  const byName = new Map<string, Queue>();
  for (const flow of flows) for (const queue of flow.queues) if (!byName.has(queue.name)) byName.set(queue.name, queue);
  return [...byName.values()];
}
