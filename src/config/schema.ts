/**
 * The configuration's single source of truth. Every option is documented, with its default, in
 * `config/default.yaml`; the defaults here are the same values, so a missing default file still
 * yields a working configuration.
 */
import { z } from 'zod';

import { checkDiffSources, snapshotDiffOptions } from './diff-options.js';
import { stockRounding, timeZone } from './erp-source-options.js';
import { checkKits, kitChangesOptions, salesKitsOption } from './kit-options.js';
import { priceListsOption } from './price-list-options.js';
import { redisSchema } from './redis-options.js';
import { allocationOption, checkSites, sitesOption } from './site-options.js';

const cron = z.string().min(1).describe('a node-cron expression, seconds allowed: "*/30 * * * * *"');
const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
const dbUrl = z
  .string()
  .regex(/^(postgres|postgresql|mysql|mariadb):\/\//, 'a postgres://, mysql:// or mariadb:// URL');

/** A table, schema or database name: quoted in SQL, so restricted to plain letters, digits and "_". */
const sqlIdentifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'letters, digits and "_", not starting with a digit');

/** Store fields an ERP column may be mapped to (matched case-insensitively). */
const fieldMapping = z.record(z.string(), z.string()).default({});

const sourceBase = {
  /** Unique name; it keys the cursor in Redis and labels metrics. */
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, "_", "." or "-"'),
  /**
   * When the source is polled. Required, except for an inventory source with a `diff` and no
   * `changes` query: its `diff.schedule` is its schedule.
   */
  schedule: cron.optional(),
  /** Set to false to keep a source configured but idle. */
  enabled: z.boolean().default(true),
  /** Most records read per poll. */
  limit: positiveInt.default(1000),
  /** Maps source columns to store fields, for columns whose names differ. */
  mapping: fieldMapping,
  ...snapshotDiffOptions(cron),
  /** What a fractional Stock (5.5 kg) becomes; the rest of the row flows either way. @defaultValue 'floor' */
  stockRounding,
};

/** The cursor overlap: polls re-read this much before the last cursor, so late commits are not missed. */
const overlapMs = nonNegativeInt.default(60_000);

export const sqlSourceSchema = z.object({
  ...sourceBase,
  kind: z.literal('sql'),
  url: dbUrl,
  /**
   * Query with named parameters :cursor and :limit; columns aliased to store fields plus `cursor`.
   * Optional only for an inventory source with `snapshot` and `diff` (a table without a change column).
   */
  changes: z.string().min(1).optional(),
  /**
   * Inventory only: query naming deleted SKUs (columns `code` and `cursor`; the same :cursor and :limit
   * rules as `changes`), each treated as vanished at once. Unset: none.
   */
  deletions: z.string().min(1).optional(),
  /** Optional query returning the full current set, for the reconcile. */
  snapshot: z.string().min(1).optional(),
  /** Cursor value before the first poll (null: from the beginning). */
  initialCursor: z.union([z.string(), z.number()]).nullable().default(null),
  overlapMs,
  /** The zone of timestamp columns without one, whatever the process's TZ (erp-source-options.ts). */
  timeZone,
});

export const csvSourceSchema = z.object({
  ...sourceBase,
  kind: z.literal('csv'),
  /** Drop folder; processed files move to `processed/`, bad ones to `rejected/` with a report. */
  dir: z.string().min(1),
  /** Column separator; `auto` picks `;` or `,` from the header line. */
  delimiter: z.enum(['auto', ';', ',', '\t']).default('auto'),
  /** Numbers written as 1.234,56. */
  decimalComma: z.boolean().default(false),
  /** A file is read only once it has not changed for this long (a half-written file is left alone). */
  settleMs: nonNegativeInt.default(2000),
  /** File names to pick up. */
  pattern: z.string().default('*.csv'),
  encoding: z.enum(['utf8', 'latin1']).default('utf8'),
  /**
   * A full-inventory export (the ERP's nightly "all items" file), read in place by the reconcile and
   * never moved; read with the same rules as the drop folder's files. Unset: no snapshot.
   */
  snapshotFile: z.string().min(1).optional(),
});

export const httpSourceSchema = z.object({
  ...sourceBase,
  kind: z.literal('http'),
  url: z.string().url(),
  /** Query parameter carrying the cursor. */
  cursorParam: z.string().default('since'),
  /** Query parameter carrying the limit. */
  limitParam: z.string().default('limit'),
  /** Dotted path of the records array in the response (`''`: the body is the array). */
  recordsPath: z.string().default('items'),
  /** Extra request headers, such as Authorization (secret: masked everywhere). */
  headers: z.record(z.string(), z.string()).default({}),
  timeoutMs: positiveInt.default(30_000),
  initialCursor: z.union([z.string(), z.number()]).nullable().default(null),
  overlapMs,
  /** Query parameter carrying the last record's key when a poll continues (paging rows that share a cursor); unset: none. */
  afterKeyParam: z.string().min(1).optional(),
  /**
   * URL answering the full current set (same headers and recordsPath, one GET, no cursor), for the
   * reconcile and the snapshot diff. Unset: no snapshot.
   */
  snapshotUrl: z.string().url().optional(),
});

export const sourceSchema = z.discriminatedUnion('kind', [sqlSourceSchema, csvSourceSchema, httpSourceSchema]);

/** The sale statuses of the spec's States table and their meanings. */
export const DEFAULT_STATUS_TEXTS: Readonly<Record<string, string>> = Object.freeze({
  '0': 'Pending',
  '1': 'Confirmed',
  '2': 'In process',
  '3': 'Completed',
  '6': 'Delivered',
  '-1': 'Rejected',
  '-2': 'Cancelled',
});

export const storeSchema = z.object({
  /** Base URL of the store API, without the /Api path. */
  baseUrl: z.string().url().default('http://127.0.0.1:8080'),
  username: z.string().default(''),
  password: z.string().default(''),
  /** The store's site id; sales and reconcile default to it. */
  siteId: positiveInt.optional(),
  /** How the store writes and reads dates without a zone. */
  timeZone: z.string().default('America/Argentina/Buenos_Aires'),
  /** Keep-alive connections to the store. */
  connections: positiveInt.default(32),
  connectTimeoutMs: positiveInt.default(10_000),
  /** Time allowed for a whole response. */
  requestTimeoutMs: positiveInt.default(30_000),
  /** The hash is renewed after this age even if it still works (the public client used 30 min). */
  authRefreshMs: positiveInt.default(25 * 60_000),
  /**
   * Logins the store did not accept (refused or unanswered) in any minute, across every process sharing
   * the Redis prefix (one at a time): a wrong password never floods the store's login; an accepted login
   * is given back. @defaultValue 6
   */
  maxLoginsPerMinute: positiveInt.default(6),
  /**
   * After the store refused the credentials, store traffic pauses (jobs wait, none fails) and the next
   * login is tried after `baseDelayMs`, doubling with each refusal up to `maxDelayMs`.
   */
  loginBackoff: z
    .object({
      baseDelayMs: positiveInt.default(5000),
      maxDelayMs: positiveInt.default(5 * 60_000),
    })
    .prefault({}),
  retry: z
    .object({
      /** Attempts per call inside the client, the first included. */
      attempts: positiveInt.default(4),
      baseDelayMs: positiveInt.default(200),
      maxDelayMs: positiveInt.default(10_000),
    })
    .prefault({}),
  /**
   * One budget for every store request (all flows, all processes sharing the Redis prefix): at most `max`
   * requests in any window of `durationMs`, as the store sees them. null: off.
   */
  rateLimit: z.object({ max: positiveInt, durationMs: positiveInt }).nullable().default(null),
  /** Path of item creation (the spec names the operation but not its path). */
  inventoryCreatePath: z.string().startsWith('/').default('/Api/Inventory'),
  /**
   * The text sent as `StatusText` with each sale status (a status is never sent without its text).
   * Keys are statuses written as text (YAML keys); entries given in a config file are added to these.
   * @defaultValue the spec's States table
   */
  statusTexts: z
    .record(z.string().regex(/^-?\d+$/), z.string().trim().min(1, 'a non-empty text'), {
      error: (issue) => (issue.code === 'invalid_key' ? 'a sale status (an integer) as key' : undefined),
    })
    .default({ ...DEFAULT_STATUS_TEXTS }),
});

export const configSchema = z.object({
  store: storeSchema.prefault({}),
  redis: redisSchema.prefault({}),
  log: z
    .object({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      /**
       * How often the daemon logs its activity summary (store writes, failures, sales exported) while
       * work flows; per-item warnings past 10 of a kind in one period are counted in it. During a Redis
       * outage, the line saying it lasts comes at the same interval. @defaultValue 60000
       */
      summaryIntervalMs: positiveInt.default(60_000),
    })
    .prefault({}),
  http: z
    .object({
      host: z.string().default('127.0.0.1'),
      port: nonNegativeInt.max(65535).default(9464),
    })
    .prefault({}),
  admin: z
    .object({
      /** Bearer token for /admin. Without a token or basic credentials /admin is refused. */
      token: z.string().default(''),
      username: z.string().default(''),
      password: z.string().default(''),
    })
    .prefault({}),
  queue: z
    .object({
      /** Completed jobs are kept this long (seconds) and at most this many. */
      removeOnComplete: z.object({ age: positiveInt, count: positiveInt }).prefault({ age: 3600, count: 1000 }),
      /** Failed jobs are kept this long (seconds) and at most this many. */
      removeOnFail: z.object({ age: positiveInt, count: positiveInt }).prefault({ age: 14 * 86400, count: 10_000 }),
    })
    .prefault({}),
  inventory: z
    .object({
      /** Store writes in flight per worker process (and jobs processed at once). */
      concurrency: positiveInt.default(16),
      /**
       * The most SKUs one job carries: BullMQ's cost of a job is paid once per batch. A small set of
       * changes is spread over `concurrency` jobs (a poll's backlog is not); 1: one job per SKU. @defaultValue 50
       */
      batchSize: positiveInt.max(1000).default(50),
      /** Attempts per job before it fails (and can be retried from the dashboard). */
      attempts: positiveInt.default(8),
      /** First retry delay; doubles each attempt. */
      backoffMs: positiveInt.default(1000),
      /** Create items unknown to the store (POST) instead of failing them. */
      createMissing: z.boolean().default(false),
      sources: z.array(sourceSchema).default([]),
      /** Sources of kit compositions (rows kit, component, quantity; kit-options.ts). @defaultValue [] */
      kits: z.array(z.discriminatedUnion('kind', [sqlSourceSchema.extend(kitChangesOptions(cron).sql), csvSourceSchema.extend(kitChangesOptions(cron).other), httpSourceSchema.extend(kitChangesOptions(cron).other)])).default([]),
      reconcile: z
        .object({
          /** Cron of the full reconcile; null: only on demand. */
          schedule: cron.nullable().default(null),
          /**
           * Sites the reconcile reads, in addition to `store.siteId` and the SiteIds the ERP records name;
           * with none of them, the whole store unfiltered. @defaultValue []
           */
          siteIds: z.array(positiveInt).default([]),
          /**
           * Store items no ERP source has, as a full reconcile (every enabled source, no SKU filter) finds
           * them: `report` counts and lists them; `zero` publishes Stock 0; `unpublish` also sends
           * Published false. Held, none acted on, when more than `orphansMaxFraction` of the store items
           * read (and more than 10) would be. @defaultValue 'report'
           */
          orphans: z.enum(['report', 'zero', 'unpublish']).default('report'),
          /** The guard of `orphans`: the largest fraction of the store items read acted on without `--confirm-orphans`. @defaultValue 0.05 */
          orphansMaxFraction: z.number().min(0).max(1).default(0.05),
        })
        .prefault({}),
      priceLists: priceListsOption,
      sites: sitesOption,
      allocation: allocationOption,
      /** Units kept off the store per SKU; a record's `SafetyStock` column overrides it. */
      safetyStock: nonNegativeInt.default(0),
      reservations: z
        .object({
          /** Subtract the units of sales the ERP has not booked yet; null: on whenever sales sync runs (a `sales.sink` is configured). */
          enabled: z.boolean().nullable().default(null),
          /** Sale statuses whose lines are reserved from the moment storesync sees them. */
          statuses: z.array(z.number().int().nonnegative()).min(1).default([0, 1, 2, 3]),
          /** When booked sales are looked for (SQL sink: `erp_processed_at`) and the gauges refreshed. */
          schedule: cron.default('*/15 * * * * *'),
          /** Release a reservation this long after it was made even if the ERP never booked it; null: never. */
          releaseAfterMinutes: positiveInt.nullable().default(null),
        })
        .prefault({}),
    })
    .prefault({}),
  sales: z
    .object({
      /** false: no scheduled pull (with a sink, sales queued on demand are still exported). */
      enabled: z.boolean().default(true),
      concurrency: positiveInt.default(4),
      attempts: positiveInt.default(10),
      backoffMs: positiveInt.default(5000),
      pull: z
        .object({
          schedule: cron.default('0 */2 * * * *'),
          statuses: z.array(z.number().int()).min(1).default([1]),
          /** The one site this process pulls; unset: see `pullSites` (src/sync/sales/pull-sites.ts). */
          siteId: positiveInt.optional(),
          lookbackHours: positiveInt.default(48),
          settleMinutes: nonNegativeInt.default(0),
          pageSize: positiveInt.max(1000).default(100),
          /**
           * Most listing pages one pull reads. Paging runs until the store answers an empty page; past this
           * many pages it stops with a warning and `storesync_store_paging_stopped_total` (a store looping).
           * @defaultValue 1000
           */
          maxPages: positiveInt.default(1000),
        })
        .prefault({}),
      sink: z
        .discriminatedUnion('kind', [
          z.object({
            kind: z.literal('sql'),
            url: dbUrl,
            /** Schema (PostgreSQL) or database (MariaDB) of the interface tables; default: the connection's. */
            schema: sqlIdentifier.optional(),
            /** Names of the interface tables (see the README, "Interface tables"). */
            tables: z
              .object({ sales: sqlIdentifier.default('storesync_sales'), items: sqlIdentifier.default('storesync_sale_items') })
              .prefault({}),
          }),
          z.object({
            kind: z.literal('http'),
            url: z.string().url(),
            headers: z.record(z.string(), z.string()).default({}),
            timeoutMs: positiveInt.default(30_000),
          }),
          z.object({ kind: z.literal('file'), dir: z.string().min(1).default('./out/sales') }),
        ])
        /**
         * Where sales go. null (the default): sales sync is off; nothing is pulled, exported or
         * acknowledged on the store until a sink is configured explicitly.
         */
        .nullable()
        .default(null),
      /** Days the record of an acknowledged sale is kept in Redis (it must outlive the pull window). */
      stateTtlDays: positiveInt.default(90),
      ack: z
        .object({
          /** false: export only; the store's sale is left as it is. */
          enabled: z.boolean().default(true),
          status: z.number().int().default(2),
          /** Sent with `status`; unset: the text of `status` in `store.statusTexts`. */
          statusText: z.string().trim().min(1).optional(),
          /** Template; {erpRef}, {saleId} and {siteId} are replaced. */
          observations: z.string().default('ERP order {erpRef}'),
        })
        .prefault({}),
      kits: salesKitsOption,
    })
    .prefault({}),
  fulfillment: z
    .object({
      concurrency: positiveInt.default(4),
      /** Attempts per shipment update before it fails. */
      attempts: positiveInt.default(8),
      /** First retry delay; doubles each attempt. */
      backoffMs: positiveInt.default(2000),
      /** Sale statuses an update may set; others are rejected (stores can customise their statuses). */
      statuses: z.array(z.number().int()).min(1).default([0, 1, 2, 3, 6, -1, -2]),
      /** Statuses a sale is never moved out of unless the update is forced. */
      finalStatuses: z.array(z.number().int()).default([6, -1, -2]),
      sources: z.array(sourceSchema).default([]),
    })
    .prefault({}),
  shutdown: z
    .object({
      /** Time workers get to finish their jobs on SIGTERM before they are returned to the queue. */
      timeoutMs: positiveInt.default(30_000),
    })
    .prefault({}),
}).superRefine((config, ctx) => {
  checkDiffSources(config, ctx);
  checkSites(config.inventory, ctx);
  checkKits(config, ctx);
  // Every status storesync may write needs its text: the store would otherwise show a blank or stale one.
  const texts = config.store.statusTexts;
  const missing = (status: number): boolean => texts[String(status)] === undefined;
  if (config.sales.ack.statusText === undefined && missing(config.sales.ack.status)) {
    ctx.addIssue({ code: 'custom', path: ['sales', 'ack', 'status'], message: `status ${config.sales.ack.status} has no text: add it to store.statusTexts or set sales.ack.statusText` });
  }
  config.fulfillment.statuses.forEach((status, index) => {
    if (missing(status)) {
      ctx.addIssue({ code: 'custom', path: ['fulfillment', 'statuses', index], message: `status ${status} has no text: add it to store.statusTexts` });
    }
  });
});

export type Config = z.infer<typeof configSchema>;
export type SourceConfig = z.infer<typeof sourceSchema>;
export type SqlSourceConfig = z.infer<typeof sqlSourceSchema>;
export type CsvSourceConfig = z.infer<typeof csvSourceSchema>;
export type HttpSourceConfig = z.infer<typeof httpSourceSchema>;
export type StoreConfig = z.infer<typeof storeSchema>;
export type SalesSinkConfig = NonNullable<Config['sales']['sink']>;

/**
 * Whether reservations are on: `inventory.reservations.enabled`, else whenever sales sync runs (a
 * `sales.sink` is configured).
 */
export function reservationsEnabled(config: Readonly<Config>): boolean {
  return config.inventory.reservations.enabled ?? config.sales.sink !== null;
}
