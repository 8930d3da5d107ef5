/**
 * `storesync sources test [NAME]`: what an integrator runs again and again while writing a source's
 * query. It reads one batch of each configured inventory, fulfillment and kits source (or the one named), from
 * the start or, with `--from-cursor`, from the cursor stored in Redis, and prints the records as the
 * flow would queue them, the refused ones with their reasons and the cursor the poll would store. It
 * writes nothing: no cursor moves, no job is queued, no CSV file is moved, nothing is written to Redis.
 * Exit codes: 0 every source read, 1 a source failed, 2 usage (an unknown NAME), 78 configuration.
 */
import { type Command, Option } from 'commander';
import type { Redis } from 'ioredis';

import type { SourceConfig } from '../config/schema.js';
import { FULFILLMENT_FIELDS, INVENTORY_FIELDS, KIT_FIELDS } from '../erp/fields.js';
import { createSource, toCursor } from '../erp/index.js';
import type { Cursor } from '../erp/types.js';
import { ConfigError, ErpError, StoreSyncError } from '../errors.js';
import { createRedis, describeRedis, type RedisTarget } from '../queue/connection.js';
import { redactText } from '../secrets.js';
import { checkKitRow, cyclesOf, groupRows, kitBatch, resolveAll } from '../sync/inventory/listing/index.js';
import { siteIdsOf } from '../sync/inventory/target-key.js';
import { previewSource, type SourceFlow, type SourcePreview, storedCursor } from '../sync/source-preview.js';
import { type CliContext, formatTable } from './context.js';
import { OptionValues } from './option-values.js';

interface SourcesTestOptions {
  limit?: string;
  json?: boolean;
  fromCursor?: boolean;
}

/** One source to test, with the flow that polls it. */
interface Target {
  flow: SourceFlow;
  config: SourceConfig;
}

/** What `sources test` prints for one source (the --json shape). */
export interface SourceTestResult {
  source: string;
  kind: SourceConfig['kind'];
  flow: SourceFlow;
  enabled: boolean;
  /** `start`: as a first poll would (from the beginning, or `from` = initialCursor); `stored`: from the cursor in Redis. */
  readFrom: 'start' | 'stored';
  from: Cursor;
  limit: number;
  records: Array<{ ref: string; cursor: Cursor; fields: Record<string, unknown> }>;
  rejects: Array<{ ref: string; record: string; field: string; value: unknown; rule: string }>;
  /** The cursor the poll would store after this batch. */
  cursor: Cursor;
  /** Rows read; `records` and `rejects` show at most `limit` of them each. */
  read: number;
  /** Rows refused, whole or in part, whatever refused them (the source's coercion or the flow's rules). */
  refused: number;
  /** Files a CSV source left for the next poll: changed less than `settleMs` ago. */
  unsettled: Array<{ file: string; ageMs: number; settleMs: number }>;
  /** Why the source could not be read. */
  error?: { code: string; message: string };
  /** A kits source: the kits its rows compose, each with its components (`quantity × code`; none: read from its changes, no longer a kit). */
  kits?: Record<string, string[]>;
  /** A kits source: the cycles among those kits, each as its codes in order (refused: their kits are not written). */
  cycles?: string[][];
}

/** Registers `sources test`. */
export function registerSourcesCommands(program: Command, ctx: CliContext): void {
  const sources = program.command('sources').description('look at the configured ERP sources');
  sources
    .command('test')
    .description('read one batch of a source (default: every inventory and fulfillment source) and print it; writes nothing')
    .argument('[name]', 'the source to read')
    .addOption(new Option('--limit <n>', "records to read (default: the source's limit)"))
    .option('--json', 'print the result as JSON')
    .option('--from-cursor', 'start from the cursor stored in Redis instead of the beginning')
    .action(async (name: string | undefined, options: SourcesTestOptions, command: Command) => {
      const values = new OptionValues();
      const limit = values.int('--limit', options.limit, 'positive integer');
      // It only ever reads: "nothing sent" would suggest it could send something.
      values.check('sources test', [], { readOnly: true });
      const targets = selectTargets(ctx, name, command);
      if (targets.length === 0) {
        ctx.io.stdout.write('No inventory or fulfillment source is configured (inventory.sources, fulfillment.sources).\n');
        return;
      }
      const { results, failures } = await testSources(ctx, targets, { limit, fromCursor: options.fromCursor === true });
      if (options.json) ctx.io.stdout.write(`${JSON.stringify({ sources: results }, null, 2)}\n`);
      else ctx.io.stdout.write(`${results.map(describe).join('\n\n')}\n`);
      // Every source was tried and printed; a failure is then the ERP's (or the query's): exit 1 with its message.
      const [first] = failures;
      if (failures.length === 1) throw first;
      if (failures.length > 1) {
        // One line for all; its code is the first failure's (each message keeps its own source and reason).
        const code = first instanceof ErpError ? first.code : 'ERR_ERP_QUERY';
        throw new ErpError(`${failures.length} sources`, failures.map(messageOf).join('; '), { code });
      }
    });
}

/** The configured sources, or the one(s) called `name`; an unknown name is a usage error (exit 2). */
function selectTargets(ctx: CliContext, name: string | undefined, command: Command): Target[] {
  // Reading sources needs neither the store nor /admin: their unset `${NAME}`s are no problem here.
  const config = ctx.config('sources');
  const all: Target[] = [
    ...config.inventory.sources.map((source) => ({ flow: 'inventory' as const, config: source })),
    ...config.fulfillment.sources.map((source) => ({ flow: 'fulfillment' as const, config: source })),
    ...config.inventory.kits.map((source) => ({ flow: 'kits' as const, config: source })),
  ];
  if (name === undefined) return all;
  const named = all.filter((target) => target.config.name === name);
  if (named.length === 0) {
    const known = all.map((target) => target.config.name).join(', ') || '(none configured)';
    // Exit 2, as for any other usage error.
    command.error(`storesync: no source named "${name}" (configured: ${known})`, { exitCode: 2, code: 'storesync.unknownSource' });
  }
  return named;
}

/** Reads each target in turn; a failing source is reported in its result (and returned) and the others still run. */
async function testSources(
  ctx: CliContext,
  targets: readonly Target[],
  options: { limit: number | undefined; fromCursor: boolean },
): Promise<{ results: SourceTestResult[]; failures: unknown[] }> {
  const config = ctx.config('sources');
  const logger = ctx.logger();
  // Redis is opened only to read stored cursors, and never written to.
  let redis: Redis | undefined;
  try {
    if (options.fromCursor) redis = await openRedis(config.redis);
    const results: SourceTestResult[] = [];
    const failures: unknown[] = [];
    for (const target of targets) {
      const fields = target.flow === 'inventory' ? INVENTORY_FIELDS : target.flow === 'kits' ? KIT_FIELDS : FULFILLMENT_FIELDS;
      const limit = options.limit ?? target.config.limit;
      const base = { source: target.config.name, kind: target.config.kind, flow: target.flow, enabled: target.config.enabled, limit };
      const source = createSource(target.config, { fields, logger });
      try {
        // A kits source is read whole (its snapshot), unless it has a changes query: then, as an inventory source, its changes.
        const kitChanges = target.flow === 'kits' && target.config.kind === 'sql' && target.config.changes !== undefined;
        const stored = redis && (target.flow !== 'kits' || kitChanges) ? await storedCursor(redis, config.redis.prefix, target.flow, target.config.name) : undefined;
        // Where the daemon's first poll starts: the configured initialCursor, else the beginning.
        const initial = 'initialCursor' in target.config ? toCursor(target.config.initialCursor) : null;
        // A sql source without a changes query is read by its snapshot diff, a kits source whole: its snapshot is shown.
        const snapshot = target.flow === 'kits' ? !kitChanges : target.config.kind === 'sql' && target.config.changes === undefined;
        const preview = await previewSource(source, { flow: target.flow, from: stored ?? initial, limit, sourceLimit: target.config.limit, snapshot, priceLists: config.inventory.priceLists, sites: siteIdsOf(config.inventory) });
        results.push({ ...base, readFrom: stored === undefined ? 'start' : 'stored', ...present(preview), ...(target.flow === 'kits' ? kitsOf(preview, kitChanges) : {}) });
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        failures.push(error);
        results.push({ ...base, readFrom: 'start', from: null, records: [], rejects: [], cursor: null, read: 0, refused: 0, unsettled: [], error: errorOf(error) });
      } finally {
        await source.close();
      }
    }
    return { results, failures };
  } finally {
    redis?.disconnect();
  }
}

/** A connection for reading cursors, or a clear error (exit 1) when Redis does not answer. */
async function openRedis(target: RedisTarget): Promise<Redis> {
  const redis = createRedis(target, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  // connect() only says "Connection is closed"; the event carries the reason (ECONNREFUSED, …).
  let reason: unknown;
  redis.on('error', (error: unknown) => {
    reason = error;
  });
  try {
    await redis.connect();
    return redis;
  } catch (failure) {
    const error = reason ?? failure;
    redis.disconnect();
    const where = describeRedis(typeof target === 'string' ? target.replace(/\/\/[^@/]*@/, '//') : target);
    throw new StoreSyncError('ERR_REDIS', `--from-cursor: cannot read the stored cursors, Redis at ${where} does not answer (${messageOf(error)})`, {
      cause: error,
      retryable: true,
    });
  }
}

function present(preview: SourcePreview): Pick<SourceTestResult, 'from' | 'records' | 'rejects' | 'cursor' | 'read' | 'refused' | 'unsettled'> {
  return {
    from: preview.from,
    read: preview.read,
    refused: preview.refused,
    unsettled: preview.unsettled,
    records: preview.records.map((record) => ({ ref: record.ref, cursor: record.cursor, fields: record.fields })),
    rejects: preview.rejects.flatMap((reject) =>
      reject.issues.map((issue) => ({ ref: reject.ref, record: issue.record ?? reject.ref, field: issue.field, value: issue.value, rule: issue.rule })),
    ),
    cursor: preview.nextCursor,
  };
}

/**
 * The kits a kits source's rows compose (kit → `quantity × component`, the refused rows left out) and
 * their cycles. Read from its changes, a kit whose only row has neither component nor quantity has none
 * (it would leave the catalog): shown with no components.
 */
function kitsOf(preview: SourcePreview, changes: boolean): Pick<SourceTestResult, 'kits' | 'cycles'> {
  const direct = changes
    ? new Map([...kitBatch({ records: preview.records, rejected: [] }, false).changes].map(([kit, rows]) => [kit, rows === null ? [] : (groupRows(rows).get(kit) ?? [])]))
    : groupRows(
        preview.records.flatMap((record) => {
          const row = checkKitRow(record.fields, record.ref);
          return Array.isArray(row) ? [] : [row];
        }),
      );
  const kits = Object.fromEntries([...direct].map(([kit, components]) => [kit, components.map((c) => `${c.quantity} × ${c.code}`)]));
  return { kits, cycles: cyclesOf(resolveAll(new Map([...direct].filter(([, components]) => components.length > 0)))) };
}

function messageOf(error: unknown): string {
  return redactText(error instanceof Error ? error.message : String(error));
}

function errorOf(error: unknown): { code: string; message: string } {
  return { code: error instanceof StoreSyncError ? error.code : 'ERR_UNEXPECTED', message: messageOf(error) };
}

/** The readable report of one source. */
function describe(result: SourceTestResult): string {
  const from =
    result.readFrom === 'stored' ? `from the stored cursor ${String(result.from)}` : result.from === null ? 'from the start' : `from the initialCursor ${String(result.from)}`;
  const lines = [`${result.source} (${result.kind}, ${result.flow}${result.enabled ? '' : ', disabled'}): one batch of at most ${result.limit}, ${from}`];
  if (result.error) {
    lines.push(`  error: ${result.error.code}: ${result.error.message}`);
    return lines.join('\n');
  }
  // The first-poll trap of polled sources (see erp/polling.ts); an empty CSV drop folder is normal.
  if (result.kind !== 'csv' && result.from === null && result.records.length === 0 && result.rejects.length === 0) {
    lines.push('  Nothing read from the start: if the ERP has data, the query (or endpoint) must read from the start when the cursor is null (see the warning).');
  }
  for (const left of result.unsettled) {
    lines.push(`  Left for the next poll: ${left.file} changed ${left.ageMs} ms ago, less than settleMs (${left.settleMs} ms): it may still be written.`);
  }
  const cut = result.read > result.limit ? `  (${result.read} rows read, at most ${result.limit} shown)` : '';
  lines.push('', `Records (${result.records.length}):${cut}`);
  if (result.records.length > 0) lines.push(formatTable(result.records.map((record) => ({ ...record.fields, cursor: record.cursor }))));
  if (result.kits) {
    const kits = Object.entries(result.kits);
    lines.push('', `Kits (${kits.length}):`, ...kits.map(([kit, components]) => `  ${kit} = ${components.length === 0 ? '(no components: no longer a kit)' : components.join(' + ')}`));
    for (const cycle of result.cycles ?? []) lines.push(`  cycle ${[...cycle, cycle[0]].join(' → ')} refused: its kits are not written`);
  }
  // Rows refused, each once, though a row may break several rules (one line each below).
  lines.push('', `Rejected (${result.refused}):`);
  if (result.rejects.length > 0) {
    const rows = result.rejects.map((reject) => ({ ...reject, value: reject.value === undefined ? '' : JSON.stringify(reject.value) }));
    lines.push(formatTable(rows, ['record', 'field', 'value', 'rule']));
  }
  lines.push('', `Cursor it would store: ${result.cursor === null ? '(none)' : JSON.stringify(result.cursor)}  (nothing was written)`);
  return lines.join('\n');
}
