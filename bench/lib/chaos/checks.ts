/**
 * What the chaos run verifies once the daemons have drained: nothing lost, nothing stale, nothing
 * invalid sent, every sale exported and acknowledged exactly once, no secret at rest. Each check is
 * one line of the report.
 */
import { readFileSync } from 'node:fs';

import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import pg from 'pg';

import type { Simulator } from '../../../src/simulator/index.js';
import { dumpPrefix } from '../../../test/support/redis.js';
import type { DiffTruth } from './diff-driver.js';
import { type ErpModel, priceOf, versionOf } from './erp-driver.js';

/** One line of the report. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

const sample = (items: readonly string[], n = 5): string => `${items.slice(0, n).join('; ')}${items.length > n ? ` … (${items.length} in all)` : ''}`;

/**
 * Units the store's open sales hold per code. storesync publishes ERP stock minus these (reservations,
 * default statuses 0 to 3), and the chaos ERP never books a sale, so every sale it placed still holds its units.
 */
export function reservedUnits(sim: Simulator): Map<string, number> {
  const reserved = new Map<string, number>();
  for (const { sale } of sim.state.sales) {
    if (typeof sale.Status !== 'number' || sale.Status < 0 || sale.Status > 3) continue;
    for (const item of sale.Items ?? []) {
      if (typeof item.Code !== 'string' || typeof item.Quantity !== 'number') continue;
      reserved.set(item.Code, (reserved.get(item.Code) ?? 0) + Math.ceil(item.Quantity));
    }
  }
  return reserved;
}

/** Stock/price differences between the store and what storesync must publish for the ERP's latest valid version, per SKU. */
export function finalValueMismatches(sim: Simulator, model: ErpModel): string[] {
  const reserved = reservedUnits(sim);
  const wrong: string[] = [];
  for (const [code, version] of model.latest) {
    const item = sim.state.items.get(code)?.item;
    const held = reserved.get(code) ?? 0;
    const published = Math.max(0, version - held);
    if (!item) wrong.push(`${code} missing on the store`);
    else if (item.Stock !== published || item.Price !== priceOf(version)) {
      wrong.push(`${code} store Stock ${item.Stock} Price ${item.Price}, ERP latest version ${version} (Price ${priceOf(version)}) less ${held} reserved`);
    }
  }
  return wrong;
}

/** The final value of every SKU is the ERP's latest valid change. */
export function checkFinalValues(sim: Simulator, model: ErpModel): CheckResult {
  const wrong = finalValueMismatches(sim, model);
  return {
    name: `inventory: the store ends with the ERP's latest value, less the units open sales hold, for every SKU (${model.latest.size} SKUs, ${model.rowsWritten} rows)`,
    ok: wrong.length === 0,
    detail: wrong.length === 0 ? 'all equal' : sample(wrong),
  };
}

/** Differences between the store and the diff source's table: a row's figures less the units open sales hold, Stock 0 for a deleted row. */
export function diffValueMismatches(sim: Simulator, truth: DiffTruth): string[] {
  const reserved = reservedUnits(sim);
  const wrong: string[] = [];
  for (const [code, row] of truth.present) {
    const item = sim.state.items.get(code)?.item;
    const held = reserved.get(code) ?? 0;
    const published = Math.max(0, row.stock - held);
    if (!item) wrong.push(`${code} missing on the store`);
    else if (item.Stock !== published || item.Price !== row.price) {
      wrong.push(`${code} store Stock ${item.Stock} Price ${item.Price}, table Stock ${row.stock} Price ${row.price} less ${held} reserved`);
    }
  }
  for (const code of truth.absent) {
    const stock = sim.state.items.get(code)?.item.Stock;
    if (stock !== 0) wrong.push(`${code} deleted from the table, store Stock ${stock}`);
  }
  return wrong;
}

/** The diff source's SKUs end as its table says (read by snapshot diffs only: no change column). */
export function checkDiffValues(sim: Simulator, truth: DiffTruth, writes: { rewrites: number; deletions: number; putBack: number }): CheckResult {
  const wrong = diffValueMismatches(sim, truth);
  return {
    name:
      `inventory (snapshot diff): the store ends as the table without a change column says, deleted rows at Stock 0 ` +
      `(${truth.present.size + truth.absent.length} SKUs, ${writes.rewrites} rewrites, ${writes.deletions} deletions, ${writes.putBack} put back)`,
    ok: wrong.length === 0 && writes.deletions > 0,
    detail: wrong.length === 0 ? `all equal; ${truth.absent.length} rows deleted at the end` : sample(wrong),
  };
}

/**
 * No write replaced a newer version with an older one (a write's Price encodes its ERP version, and those
 * only go up per SKU), and no Stock was above the ERP figure of the version it went with (Stock = version in
 * the chaos ERP): reservations may publish less than the ERP, never more. A Stock-only write (a reservation
 * changed) is held to the highest version written before it.
 */
export function checkNoStaleWrites(sim: Simulator, unversioned: ReadonlySet<string> = new Set()): CheckResult {
  const highest = new Map<string, number>();
  const stale: string[] = [];
  let writes = 0;
  for (const write of sim.writes) {
    if (unversioned.has(write.code)) continue;
    writes += 1;
    const seen = highest.get(write.code) ?? 0;
    const stock = write.fields.Stock;
    const price = write.fields.Price;
    let version = seen;
    if (typeof price === 'number' && price > 0) {
      version = versionOf(price);
      if (version < seen) stale.push(`${write.code} Price of version ${version} written after version ${seen} (seq ${write.seq})`);
    }
    if (typeof stock === 'number' && stock > version) stale.push(`${write.code} Stock ${stock} above its ERP version ${version} (seq ${write.seq})`);
    highest.set(write.code, Math.max(seen, version));
  }
  return {
    name: `inventory: no write replaced a newer version with an older one or published more than the ERP (${writes} writes)`,
    ok: stale.length === 0,
    detail: stale.length === 0 ? 'versions only went up; no Stock above its version' : sample(stale),
  };
}

/** Invalid ERP rows never reached the store: no such value in the write log, no 400 from the store. */
export function checkInvalidNeverSent(sim: Simulator, model: ErpModel): CheckResult {
  const sent = sim.writes.filter((w) => (typeof w.fields.Stock === 'number' && w.fields.Stock < 0) || w.fields.Price === 0);
  const refused = sim.counters().rejectedWrites;
  return {
    name: `inventory: the ${model.invalid.length} invalid ERP rows were never sent`,
    ok: model.invalid.length > 0 && sent.length === 0 && refused === 0,
    detail: `${sent.length} invalid values in the write log, ${refused} writes refused by the store with 400`,
  };
}

/** Every invalid row is recorded as a refused record (a failed job of `inventory-rejects`) and counted. */
export async function checkRejectsRecorded(redis: Redis, prefix: string, model: ErpModel, counted: number): Promise<CheckResult> {
  const queue = new Queue('inventory-rejects', { connection: redis, prefix });
  let failed;
  try {
    failed = await queue.getFailed(0, -1);
  } finally {
    await queue.close();
  }
  const refs = failed.map((job) => `${String((job.data as { sku?: unknown }).sku)} ${String((job.data as { ref?: unknown }).ref)}`);
  const missing = model.invalid.filter(({ code, at }) => !refs.some((ref) => ref.startsWith(`${code} `) && ref.includes(new Date(at).toISOString())));
  return {
    name: `inventory: every invalid ERP row is recorded as refused and counted (${model.invalid.length} rows)`,
    ok: missing.length === 0 && counted >= model.invalid.length,
    detail:
      `${failed.length} refused records in inventory-rejects, metric storesync_erp_records_rejected_total = ${counted}` +
      (missing.length > 0 ? `; not recorded: ${sample(missing.map((m) => `${m.code} at ${new Date(m.at).toISOString()}`))}` : ''),
  };
}

/** Sum of `storesync_erp_records_rejected_total` on a daemon's /metrics (NaN when unreachable). */
export async function rejectedMetric(daemonUrl: string): Promise<number> {
  try {
    const text = await (await fetch(`${daemonUrl}/metrics`)).text();
    return [...text.matchAll(/^storesync_erp_records_rejected_total\{[^}]*\} (\d+(?:\.\d+)?)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  } catch {
    return Number.NaN;
  }
}

/** Rows per sale id in the interface table (`storesync_sales`). */
export async function salesExportCounts(erpUrl: string): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: erpUrl });
  await client.connect();
  try {
    const result = await client.query<{ sale_id: string; n: string }>('SELECT sale_id::text, count(*)::text AS n FROM storesync_sales GROUP BY sale_id');
    return new Map(result.rows.map((row) => [Number(row.sale_id), Number(row.n)]));
  } finally {
    await client.end();
  }
}

/** Acknowledgements (updates with the ack status) per sale in the simulator's sale-update log. */
export function saleAcks(sim: Simulator, ackStatus: number): Map<number, number> {
  const acks = new Map<number, number>();
  for (const update of sim.saleUpdates) {
    if (update.fields.Status === ackStatus) acks.set(update.saleId, (acks.get(update.saleId) ?? 0) + 1);
  }
  return acks;
}

/** Each created sale has exactly one row in the interface table. */
export function checkSalesExportedOnce(saleIds: readonly number[], exported: ReadonlyMap<number, number>): CheckResult {
  const wrong = saleIds.filter((id) => exported.get(id) !== 1).map((id) => `sale ${id} exported ${exported.get(id) ?? 0} times`);
  return {
    name: `sales: each of the ${saleIds.length} sales is exactly once in the ERP interface table`,
    ok: saleIds.length > 0 && wrong.length === 0,
    detail: wrong.length === 0 ? 'each once' : sample(wrong),
  };
}

/** Each created sale was acknowledged exactly once (one update with the ack status). */
export function checkSalesAckedOnce(saleIds: readonly number[], acks: ReadonlyMap<number, number>): CheckResult {
  const wrong = saleIds.filter((id) => acks.get(id) !== 1).map((id) => `sale ${id} acknowledged ${acks.get(id) ?? 0} times`);
  return {
    name: `sales: each of the ${saleIds.length} sales is acknowledged exactly once on the store`,
    ok: saleIds.length > 0 && wrong.length === 0,
    detail: wrong.length === 0 ? 'each once' : sample(wrong),
  };
}

/** No inventory or sales job ended as a permanent failure (that would be work given up). */
export async function checkNoFailedJobs(redis: Redis, prefix: string): Promise<CheckResult> {
  const lines: string[] = [];
  for (const name of ['inventory', 'sales']) {
    const queue = new Queue(name, { connection: redis, prefix });
    try {
      const failed = await queue.getFailed(0, 20);
      const count = await queue.getFailedCount();
      if (count > 0) lines.push(`${name}: ${count} failed (${failed.slice(0, 3).map((job) => `${job.name}: ${job.failedReason}`).join('; ')})`);
    } finally {
      await queue.close();
    }
  }
  return { name: 'queues: no inventory or sales job failed permanently', ok: lines.length === 0, detail: lines.length === 0 ? 'none failed' : lines.join(' | ') };
}

/** No secret in any Redis key or value under the prefix, nor in any daemon log. */
export async function checkSecretsAtRest(redis: Redis, prefix: string, secrets: readonly string[], logFiles: readonly string[]): Promise<CheckResult> {
  const found: string[] = [];
  const dump = await dumpPrefix(redis, prefix);
  for (const [key, value] of dump) {
    for (const secret of secrets) if (`${key}\n${value}`.includes(secret)) found.push(`Redis key ${key}`);
  }
  for (const file of logFiles) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const secret of secrets) if (text.includes(secret)) found.push(`log ${file}`);
  }
  return {
    name: `secrets: no store password, auth hash or admin token in Redis or the daemon logs (${dump.size} keys, ${logFiles.length} logs)`,
    ok: found.length === 0,
    detail: found.length === 0 ? 'none found' : sample([...new Set(found)]),
  };
}
