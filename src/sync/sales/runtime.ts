/**
 * What the sales pull, worker and one-off exports work with: one Redis connection for state and the
 * `sales` queue, the sink, the state store, the events. Opened once per flow (or per CLI run) and
 * closed with it.
 */
import { type Config, reservationsEnabled, type SalesSinkConfig } from '../../config/schema.js';
import { createSink, type SalesSink } from '../../erp/sinks/index.js';
import { ConfigError } from '../../errors.js';
import type { TypedEmitter } from '../../events.js';
import { Queue } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { FlowDeps } from '../flow.js';
import { type KitCatalog, redisKitCatalog, ReservationSync } from '../inventory/listing/index.js';
import { closeConnection, type FlowRuntime, openFlowRuntime, retryingJobOptions } from '../runtime.js';
import { StoreRejects } from '../store-rejects.js';
import { SaleStateStore } from './sale-state.js';
import type { SalesEvents, SalesJobData } from './types.js';

/** The open resources of the sales flow, shared by its pull, worker and one-off exports. */
export interface SalesRuntime extends FlowRuntime<SalesEvents> {
  readonly state: SaleStateStore;
  readonly queue: Queue<SalesJobData>;
  readonly sink: SalesSink;
  /** Sales the store sent that did not fit, kept as failed jobs of `store-rejects`. */
  readonly storeRejects: StoreRejects;
  /** Reservations, when on (`inventory.reservations`): the pull reserves and releases through it. */
  readonly reservations?: ReservationSync;
  /** The kit catalog, when `inventory.kits` composes kits: kit lines reserve their components, and may be exported as them. */
  readonly kits?: KitCatalog;
  close(): Promise<void>;
}

/** Options of `openSalesRuntime`. */
export interface SalesRuntimeOptions {
  /** A sink to use instead of the configured one; the caller keeps it and closes it. */
  sink?: SalesSink;
  events?: TypedEmitter<SalesEvents>;
}

/** Job options of every sales job: many retries with exponential backoff, trimmed history. */
export function salesJobOptions(config: Readonly<Config>) {
  return retryingJobOptions(config, config.sales, 0.3);
}

/**
 * The one site every sale is keyed by: `sales.pull.siteId`, else `store.siteId` when `inventory.sites`
 * is empty. Null when each sale's own site decides: no site configured, or several (`inventory.sites`:
 * the pull reads each, see pull-sites.ts, and a sale named by id alone takes the `SiteId` the store gives).
 */
export function pullSiteId(config: Readonly<Config>): number | null {
  return config.sales.pull.siteId ?? (config.inventory.sites.length > 0 ? null : (config.store.siteId ?? null));
}

/** True when sales sync runs: only with an explicitly configured `sales.sink`. */
export function salesEnabled(config: Readonly<Config>): boolean {
  return config.sales.sink !== null;
}

/** The configured sink, or the ConfigError saying that sales sync is off. */
export function configuredSink(config: Readonly<Config>): SalesSinkConfig {
  if (config.sales.sink === null) {
    throw new ConfigError(['sales.sink: not configured, so sales sync is off (set sales.sink to a sql, http or file sink to pull and export sales)']);
  }
  return config.sales.sink;
}

/** Opens the runtime; without a sink passed in, refuses (ConfigError) when no `sales.sink` is configured. */
export function openSalesRuntime(deps: FlowDeps, options: SalesRuntimeOptions = {}): SalesRuntime {
  const sinkConfig = options.sink ? undefined : configuredSink(deps.config);
  const base = openFlowRuntime(deps, 'sales', options.events);
  const { redis, now } = base;
  const prefix = deps.config.redis.prefix;
  const queue = new Queue<SalesJobData>(QUEUE_NAMES.sales, {
    connection: redis,
    prefix,
    defaultJobOptions: salesJobOptions(deps.config),
  });
  // Opened on first use: a pull never needs the sink (nor its database connection).
  let sink = options.sink;
  const openSink = (): SalesSink =>
    (sink ??= createSink(sinkConfig as SalesSinkConfig, { timeZone: deps.config.store.timeZone, now }));
  // Opened on first use too: a dry run never parks anything, so it leaves no trace of the queue in Redis.
  let storeRejects: StoreRejects | undefined;
  const openStoreRejects = (): StoreRejects =>
    (storeRejects ??= new StoreRejects({
      connection: redis,
      prefix,
      removeOnFail: { ...deps.config.queue.removeOnFail },
      metrics: base.metrics,
      logger: base.logger,
    }));
  const kits = deps.config.inventory.kits.length > 0 ? redisKitCatalog(redis, prefix) : undefined;
  const reservations = reservationsEnabled(deps.config)
    ? new ReservationSync({ config: deps.config, redis, logger: base.logger, metrics: base.metrics, store: base.store, now, ...(kits ? { kits } : {}) })
    : undefined;
  return {
    ...base,
    get storeRejects() {
      return openStoreRejects();
    },
    state: new SaleStateStore(redis, prefix, deps.config.sales.stateTtlDays * 86_400),
    queue,
    ...(reservations ? { reservations } : {}),
    ...(kits ? { kits } : {}),
    get sink() {
      return openSink();
    },
    async close() {
      if (!options.sink && sink) await sink.close();
      await storeRejects?.close();
      await reservations?.close();
      await queue.close();
      await closeConnection(redis);
    },
  };
}
