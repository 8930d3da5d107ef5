/**
 * The reconcile's raw least work (issue 27), measured by the bench process with nothing else to do, one
 * after the other: one read of the ERP table (every row), one read of the store's inventory (the whole
 * answer received), and the PUTs of the differences. The scale and reconcile-large rows set the
 * reconcile's wall beside it, both measured in the same run.
 */
import { request } from 'undici';

import type { BenchEnvironment } from './environment.js';
import { STORE_PASSWORD, STORE_USER } from './environment.js';
import { login, rawPutLoop } from './raw-loops.js';
import { round } from './stats.js';

/** Rows of the ERP table read per query of the raw read (keyset paging, as fast as pg allows). */
const RAW_ERP_PAGE = 50_000;

/** Issue 27: the reconcile's wall at most 1.5 × the raw least work. */
export const RECONCILE_WALL_GOAL = 1.5;

/** The raw least work, its parts in ms. */
export interface RawReconcileWork {
  erpMs: number;
  storeMs: number;
  putMs: number;
  ms: number;
}

/**
 * Reads `table` (an `id` integer key, and `columns`) whole, then the store's inventory, then PUTs `puts`
 * with `concurrency` in flight.
 */
export async function rawReconcileWork(
  env: BenchEnvironment,
  erp: { table: string; columns: string },
  puts: ReadonlyArray<{ Code: string; Stock: number; Price?: number }>,
  concurrency: number,
): Promise<RawReconcileWork> {
  let started = performance.now();
  let rows = 0;
  for (let last = 0; ; ) {
    const page = await env.erp.pool.query<{ id: number }>(`SELECT id, ${erp.columns} FROM ${erp.table} WHERE id > $1 ORDER BY id LIMIT $2`, [last, RAW_ERP_PAGE]);
    rows += page.rows.length;
    if (page.rows.length < RAW_ERP_PAGE) break;
    last = Number((page.rows[page.rows.length - 1] as { id: number | string }).id);
  }
  const erpMs = performance.now() - started;
  const hash = await login(env.sim.url, STORE_USER, STORE_PASSWORD);
  started = performance.now();
  const res = await request(`${env.sim.url}/Api/Inventory/Get?hash=${encodeURIComponent(hash)}`);
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  const storeMs = performance.now() - started;
  if (res.statusCode !== 200 || bytes === 0 || rows === 0) throw new Error(`raw reconcile read: ${rows} ERP rows, store HTTP ${res.statusCode} with ${bytes} bytes`);
  const put = await rawPutLoop(env.sim.url, hash, puts.map((p) => ({ InternalId: 0 as const, ...p })), concurrency);
  if (put.failed > 0) throw new Error(`raw reconcile PUTs: ${put.failed} of ${put.sent} failed`);
  return { erpMs: round(erpMs), storeMs: round(storeMs), putMs: round(put.ms), ms: round(erpMs + storeMs + put.ms) };
}

/** The summary row of a reconcile's wall against the raw least work. */
export function wallRow(wallMs: number, raw: RawReconcileWork, puts: number, concurrency: number): { measure: string; value: string; baseline: string; verdict: string } {
  const wallRatio = round(wallMs / raw.ms, 2);
  return {
    measure: `the reconcile's wall, from its start to its last job, against the raw least work (one read of each side, then the ${puts} PUTs, concurrency ${concurrency})`,
    value: `${round(wallMs / 1000, 1)} s`,
    baseline: `${round(raw.ms / 1000, 1)} s (ERP read ${round(raw.erpMs / 1000, 1)} s, store read ${round(raw.storeMs / 1000, 1)} s, PUTs ${round(raw.putMs / 1000, 1)} s)`,
    verdict: `${wallRatio}× (goal ≤ ${RECONCILE_WALL_GOAL}× ${wallRatio <= RECONCILE_WALL_GOAL ? 'met' : 'missed'})`,
  };
}
