/**
 * The configuration file the chaos daemons run with: the run's own Redis and PostgreSQL, the in-process
 * simulator, fast schedules and small backoffs so that a short run sees many cycles. Secrets (store
 * password, admin token) are passed through the environment, as a deployment would. With `targets`
 * (`--targets`): two sites and two price lists, a third source reading the lists' prices, and no
 * `store.siteId`, so that the sales pull reads every site.
 */
import { stringify } from 'yaml';

import { DIFF_SNAPSHOT_QUERY } from './diff-driver.js';
import { CHANGES_QUERY } from './erp-driver.js';
import { PRICES_QUERY } from './price-driver.js';

/** Where the chaos daemons find their services. */
export interface ChaosConfigInput {
  storeUrl: string;
  /** `redis` without the prefix: `{ url }`, or `{ sentinels, name }` for `--ha`. */
  redis: Record<string, unknown>;
  prefix: string;
  erpUrl: string;
  /** Overlap of the ERP source: longer than any late commit or database outage of the run. */
  overlapMs: number;
  /** `--kits`: the `inventory.kits` source. */
  kits?: Record<string, unknown>;
  /** `--targets`: `inventory.sites`, `inventory.allocation` and `inventory.priceLists`. */
  targets?: {
    sites: ReadonlyArray<{ siteId: number; share?: number }>;
    allocation: 'shared' | 'split';
    priceLists: ReadonlyArray<{ id: number; code: string }>;
  };
}

/** The YAML text of the chaos configuration. */
export function chaosConfig(input: ChaosConfigInput): string {
  const { targets } = input;
  return stringify({
    store: {
      baseUrl: input.storeUrl,
      username: 'demo',
      ...(targets ? {} : { siteId: 1 }),
      connections: 16,
      requestTimeoutMs: 5000,
      retry: { attempts: 3, baseDelayMs: 50, maxDelayMs: 500 },
    },
    redis: { ...input.redis, prefix: input.prefix },
    log: { level: 'info' },
    http: { host: '127.0.0.1' },
    inventory: {
      concurrency: 8,
      attempts: 25,
      backoffMs: 200,
      ...(targets ? { sites: targets.sites, allocation: targets.allocation, priceLists: targets.priceLists } : {}),
      ...(input.kits ? { kits: [input.kits] } : {}),
      sources: [
        {
          name: 'erp',
          kind: 'sql',
          url: input.erpUrl,
          schedule: '*/1 * * * * *',
          limit: 5000,
          overlapMs: input.overlapMs,
          initialCursor: '1970-01-01T00:00:00.000Z',
          changes: CHANGES_QUERY,
        },
        {
          // A table without a change column: its snapshot, diffed every 2 seconds; no changes, no schedule.
          name: 'legacy',
          kind: 'sql',
          url: input.erpUrl,
          limit: 5000,
          snapshot: DIFF_SNAPSHOT_QUERY,
          diff: { schedule: '*/2 * * * * *' },
          vanished: { action: 'zero', maxFraction: 0.05 },
        },
        ...(targets ? [pricesSource(input)] : []),
      ],
    },
    sales: {
      enabled: true,
      concurrency: 4,
      attempts: 25,
      backoffMs: 300,
      pull: { schedule: '*/2 * * * * *', statuses: [1], lookbackHours: 48, settleMinutes: 0, pageSize: 50 },
      sink: { kind: 'sql', url: input.erpUrl },
    },
    shutdown: { timeoutMs: 3000 },
  });
}

/** `--targets`: the price lists' rows (`tabItem Price`, naive UTC times), polled every second like the change log. */
function pricesSource(input: ChaosConfigInput): Record<string, unknown> {
  return {
    name: 'prices',
    kind: 'sql',
    url: input.erpUrl,
    timeZone: 'UTC',
    schedule: '*/1 * * * * *',
    limit: 5000,
    overlapMs: input.overlapMs,
    initialCursor: '1970-01-01T00:00:00.000Z',
    changes: PRICES_QUERY,
  };
}
