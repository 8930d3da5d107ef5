/**
 * Every metric storesync exports, on one registry per process. Prefix `storesync_`, base units, and no
 * SKU or sale id as a label (unbounded cardinality). Components receive this object and record on it.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

const PREFIX = 'storesync_';
/** Milliseconds between two samples of the event loop delay (`storesync_nodejs_eventloop_lag_*`). */
const EVENT_LOOP_SAMPLE_MS = 100;

/** The registry and every metric; one instance per process. */
export class Metrics {
  readonly registry = new Registry();

  /** Store API calls by endpoint template, method and HTTP status (`error` when none came back). */
  readonly storeRequests = new Counter({
    name: `${PREFIX}store_requests_total`,
    help: 'Store API requests by endpoint, method and status.',
    labelNames: ['endpoint', 'method', 'status'] as const,
    registers: [this.registry],
  });

  readonly storeRequestDuration = new Histogram({
    name: `${PREFIX}store_request_duration_seconds`,
    help: 'Store API request duration.',
    labelNames: ['endpoint', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** Logins by outcome: success | failure. */
  readonly storeLogins = new Counter({
    name: `${PREFIX}store_logins_total`,
    help: 'Store logins by outcome.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Logins the store refused for the credentials; each one pauses store traffic (see src/store/auth.ts). */
  readonly storeAuthFailures = new Counter({
    name: `${PREFIX}store_auth_failures_total`,
    help: 'Store logins refused for the credentials (wrong user name or password, account blocked).',
    registers: [this.registry],
  });

  /** Store records (sales, inventory items) set aside because they did not fit, counted once per record parked. */
  readonly storeRecordsRejected = new Counter({
    name: `${PREFIX}store_records_rejected_total`,
    help: 'Store records rejected on read (parked in store-rejects) by resource.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });

  /** Listings whose paging stopped before an empty page: `repeated-page` (offset ignored) or `max-pages`. */
  readonly storePagingStopped = new Counter({
    name: `${PREFIX}store_paging_stopped_total`,
    help: 'Store listings whose paging was stopped by a guard, by resource and reason.',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
  });

  /** Jobs by queue and outcome: completed | skipped | retried | failed | rejected. */
  readonly jobs = new Counter({
    name: `${PREFIX}jobs_total`,
    help: 'Jobs processed by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: `${PREFIX}job_duration_seconds`,
    help: 'Job processing time by queue.',
    labelNames: ['queue'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /** Jobs in each queue by state (waiting, active, delayed, failed, completed, prioritized). */
  readonly queueJobs = new Gauge({
    name: `${PREFIX}queue_jobs`,
    help: 'Jobs in each queue by state.',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
  });

  readonly erpRecordsRead = new Counter({
    name: `${PREFIX}erp_records_read_total`,
    help: 'Records read from ERP sources by source.',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  /** Records refused before anything was sent, by source and the rule they broke. */
  readonly erpRecordsRejected = new Counter({
    name: `${PREFIX}erp_records_rejected_total`,
    help: 'ERP records rejected by source and reason.',
    labelNames: ['source', 'reason'] as const,
    registers: [this.registry],
  });

  /** Differences the last reconcile found, by field. */
  readonly reconcileDrift = new Gauge({
    name: `${PREFIX}reconcile_drift_items`,
    help: 'Differences between ERP and store found by the last reconcile, by field.',
    labelNames: ['field'] as const,
    registers: [this.registry],
  });

  /** Store items no ERP source has, as the last full reconcile found them (`found`) and held by the guard (`held`). */
  readonly reconcileOrphans = new Gauge({
    name: `${PREFIX}reconcile_orphans`,
    help: 'Store items no ERP source has, found by the last full reconcile (state=found) and held by the mass guard (state=held).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  /** Time from an ERP change (its cursor time) to the store's acknowledgement. */
  readonly syncLag = new Histogram({
    name: `${PREFIX}sync_lag_seconds`,
    help: 'Time from an ERP change to the store acknowledging it.',
    labelNames: ['flow'] as const,
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  readonly lastSuccess = new Gauge({
    name: `${PREFIX}last_success_timestamp_seconds`,
    help: 'Unix time of the last successful run per flow.',
    labelNames: ['flow'] as const,
    registers: [this.registry],
  });

  readonly oldestUnacknowledgedSale = new Gauge({
    name: `${PREFIX}sales_oldest_unacknowledged_age_seconds`,
    help: 'Age of the oldest sale exported to the ERP or waiting, not yet acknowledged on the store.',
    registers: [this.registry],
  });

  /** Units held by store sales the ERP has not booked yet (subtracted from the published stock). */
  readonly reservedUnits = new Gauge({
    name: `${PREFIX}reserved_units`,
    help: 'Units reserved by store sales the ERP has not booked yet.',
    registers: [this.registry],
  });

  /** Sales holding a reservation the ERP has not booked yet. */
  readonly reservationsOpen = new Gauge({
    name: `${PREFIX}reservations_open`,
    help: 'Store sales holding a reservation the ERP has not booked yet.',
    registers: [this.registry],
  });

  /** Age of the oldest such sale: a day or more means the ERP is not booking sales. */
  readonly reservationOldestAge = new Gauge({
    name: `${PREFIX}reservation_oldest_age_seconds`,
    help: 'Age of the oldest reservation the ERP has not booked (0 when none).',
    registers: [this.registry],
  });

  /** SKUs the mass guard holds per source: gone from the snapshot, not zeroed until a person confirms. */
  readonly vanishedHeld = new Gauge({
    name: `${PREFIX}vanished_held`,
    help: 'SKUs gone from a source snapshot that the mass guard holds for confirmation, by source.',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  /**
   * SKUs that vanished from a source (absent from its snapshot, or named by its deletions query); those a
   * person confirmed or kept, in any process (the CLI), are counted at the next scrape (`collectHeld`).
   */
  readonly vanished = new Counter({
    name: `${PREFIX}vanished_total`,
    help: 'SKUs that vanished from an ERP source, by source and reason (absent, deleted).',
    labelNames: ['source', 'reason'] as const,
    registers: [this.registry],
  });

  /** 1 while the process's Redis (the master, through Sentinel or Cluster) answers, 0 while it is unreachable. */
  readonly redisUp = new Gauge({
    name: `${PREFIX}redis_up`,
    help: 'Whether Redis (the current master) is reachable: 1 up, 0 down.',
    registers: [this.registry],
  });

  /** Times the connections found a different master behind them (a failover, or a restarted server). */
  readonly redisFailovers = new Counter({
    name: `${PREFIX}redis_failovers_total`,
    help: 'Times storesync found a new Redis master (run_id or replication id changed): a failover or a restart.',
    registers: [this.registry],
  });

  /**
   * Seconds since the gauges read from Redis at scrape time (`queue_jobs`, `vanished_held`) were last read in full:
   * near 0 when this scrape read them, growing while Redis does not answer (the gauges then keep their last values).
   */
  readonly redisGaugesAge = new Gauge({
    name: `${PREFIX}redis_gauges_age_seconds`,
    help: 'Seconds since the gauges read from Redis (queue_jobs, vanished_held) were last read; they keep their last values meanwhile.',
    registers: [this.registry],
  });

  /** Functions that refresh gauges read from elsewhere (queue depth from Redis) right before a scrape. */
  readonly #collectors = new Set<Collector>();
  readonly #collectTimeoutMs: number;
  readonly #now: () => number;

  /**
   * `collectTimeoutMs` bounds what a scrape waits for the collectors (500 ms): past it, /metrics answers with the
   * values last read, and `storesync_redis_gauges_age_seconds` says how old they are.
   */
  constructor(options: { defaultMetrics?: boolean; collectTimeoutMs?: number; now?: () => number } = {}) {
    this.#collectTimeoutMs = options.collectTimeoutMs ?? 500;
    this.#now = options.now ?? Date.now;
    if (options.defaultMetrics ?? true) {
      // The event loop delay is sampled every 100 ms rather than prom-client's 10: each sample wakes the
      // process, and at 10 ms those wake-ups were most of an idle daemon's CPU (bench/README.md, "cli").
      // Ten samples a second still catch any stall that matters (150 per 15 s scrape).
      collectDefaultMetrics({ register: this.registry, prefix: PREFIX, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
      // These gauges end in _total, which `promtool check metrics` rejects for a non-counter; the
      // same numbers stay available per type in nodejs_active_handles / _requests / _resources.
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
        this.registry.removeSingleMetric(`${PREFIX}${name}`);
      }
    }
  }

  /** Marks a flow's successful run now. */
  markSuccess(flow: string, at = Date.now()): void {
    this.lastSuccess.set({ flow }, at / 1000);
  }

  /**
   * Runs `collect` before every scrape; returns a function that removes it. A collector that has not finished since
   * the last scrape (Redis down: its commands wait for the reconnection) is not started again, only waited for.
   */
  addCollector(collect: () => Promise<void>): () => void {
    const collector: Collector = { collect, readAt: this.#now(), running: undefined };
    this.#collectors.add(collector);
    return () => this.#collectors.delete(collector);
  }

  /** The exposition text for /metrics, after the collectors ran or `collectTimeoutMs` passed (a late one's gauges stay as they were). */
  async render(): Promise<string> {
    const runs = [...this.#collectors].map((collector) =>
      (collector.running ??= collector.collect().then(
        () => void (collector.readAt = this.#now()),
        () => undefined,
      ).finally(() => (collector.running = undefined))),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(runs), new Promise((resolve) => (timer = setTimeout(resolve, this.#collectTimeoutMs)))]);
    clearTimeout(timer);
    const oldest = Math.min(this.#now(), ...[...this.#collectors].map((collector) => collector.readAt));
    this.redisGaugesAge.set((this.#now() - oldest) / 1000);
    return this.registry.metrics();
  }
}

/** A collector, when it last finished, and its run under way. */
interface Collector {
  readonly collect: () => Promise<void>;
  /** When it last finished (the time it was added, before that). */
  readAt: number;
  running: Promise<void> | undefined;
}
