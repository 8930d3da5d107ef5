/**
 * Issue 26's row: 10,000 kits over 50,000 components, against plain items, in the same run.
 *
 * - The baseline (`item`): a daemon without `inventory.kits`, T changed rows of the change log, T PUTs.
 * - The row (`kit`): a daemon whose catalog holds 10,000 kits of 5 components each (quantities 1, 2, 1,
 *   1, 3; every component in one kit), the first 1,000 kits also holding a shared component, `HOT`.
 *   After the components of the kits measured have their stock (a setup sync, not counted), T changes of
 *   the first component of T kits: T component PUTs and T kit PUTs, each kit's figure
 *   `min floor(stock ÷ quantity)` changed.
 * - The fan-out (`hot`): one change of `HOT`, the component limiting its 1,000 kits: one PUT for it, and
 *   one per kit containing it, found through the reverse index.
 *
 * The catalog is written into Redis as a kits source leaves it (`writeComposition`, the daemon's own
 * code) before the daemon starts, the source's schedule never firing during the run. Every write of a
 * measured sync is checked against the figures computed here from the stocks the ERP was given: a code
 * missing, written twice or with another value fails the run instead of giving a figure. Costs are read
 * as the cli benchmark reads them (`sync-cost.ts`), per store write.
 */
import { createRedis } from '../../src/queue/connection.js';
import { firstSalesPullKey, type KitRow, writeComposition } from '../../src/sync/inventory/listing/index.js';
import { waitFor } from '../../src/wait-for.js';
import { sku } from './bench-erp.js';
import { type CliDaemon, startCliDaemon } from './cli-daemon.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import type { BenchResult } from './results.js';
import { type SimulatorProcess, startSimulatorProcess, type Write } from './simulator-process.js';
import { ratio, round } from './stats.js';
import { measureSync, type SyncCost } from './sync-cost.js';
import { WriteLog } from './write-log.js';

/** The catalog's size (the issue's). */
const COMPONENTS = 50_000;
const KITS = 10_000;
const QUANTITIES = [1, 2, 1, 1, 3] as const;
/** Kits 1…HOT_KITS also hold one unit of `HOT`. */
const HOT_KITS = 1000;
const HOT = sku(COMPONENTS + 1);
/** Stock of the components that never limit a kit. */
const PLENTY = 900_000;
/** The noise bands of "no higher" (as the targets row's, from the README's "Reading the figures"). */
const BAND = { cpuMs: 0.2, commands: 1, redisCpuMs: 0.05 } as const;

/** Kit number `j` (1-based) and its component number `n` (0…4). */
const kitCode = (j: number): string => sku(COMPONENTS + 1 + j);
const componentOf = (j: number, n: number): string => sku((j - 1) * QUANTITIES.length + n + 1);

/** The row's size. */
export interface KitsBenchOptions {
  /** Component changes of the kit cell (and item changes of the baseline). */
  changes: number;
  concurrency: number;
}

/** One measured sync: its cost per store write and how long its writes took. */
interface Cell extends Omit<SyncCost, 'writes' | 'top'> {
  writes: number;
  spanMs: number;
  top: Record<string, number>;
}

function compositionRows(): KitRow[] {
  const rows: KitRow[] = [];
  for (let j = 1; j <= KITS; j += 1) {
    QUANTITIES.forEach((quantity, n) => rows.push({ kit: kitCode(j), component: componentOf(j, n), quantity }));
    if (j <= HOT_KITS) rows.push({ kit: kitCode(j), component: HOT, quantity: 1 });
  }
  return rows;
}

/** A kit's figure from the stocks the ERP was given (the formula, written out). */
function kitFigure(j: number, stocks: ReadonlyMap<string, number>): number {
  const parts = QUANTITIES.map((quantity, n) => Math.floor((stocks.get(componentOf(j, n)) ?? 0) / quantity));
  if (j <= HOT_KITS) parts.push(stocks.get(HOT) ?? 0);
  return Math.min(...parts);
}

/** What is wrong with `writes` against the Stock each code must be written once with. */
function problems(expected: ReadonlyMap<string, number>, writes: readonly Write[]): string[] {
  const out: string[] = [];
  const seen = new Map<string, number>();
  for (const write of writes) {
    seen.set(write.code, (seen.get(write.code) ?? 0) + 1);
    const want = expected.get(write.code);
    if (want === undefined) out.push(`${write.code} written, not expected`);
    else if (write.fields.Stock !== want) out.push(`${write.code} written Stock ${String(write.fields.Stock)}, expected ${want}`);
  }
  for (const [code, n] of seen) if (n > 1) out.push(`${code} written ${n} times`);
  for (const code of expected.keys()) if (!seen.has(code)) out.push(`${code} not written`);
  return out.slice(0, 10);
}

/** Inserts one change row per code (1 ms apart, ending now; price fixed), the stock given. */
function insertStocks(env: BenchEnvironment, stocks: ReadonlyMap<string, number>): Promise<void> {
  const now = Date.now();
  const rows = [...stocks].map(([code, stock], i) => ({ code, stock, price: 10, at: now - stocks.size + i }));
  return env.erp.insert(rows);
}

/** Syncs `changes` (code → new stock), checks the writes against `expected` (and that none follows), and returns the cost. */
async function checkedSync(env: BenchEnvironment, log: WriteLog, daemon: CliDaemon, changes: ReadonlyMap<string, number>, expected: ReadonlyMap<string, number>): Promise<Cell> {
  const run = await measureSync(env, log, [daemon], () => insertStocks(env, changes), expected.size, 300_000);
  const late = await log.quiet(2000, 60_000);
  const wrong = problems(expected, [...run.writes, ...late]);
  if (wrong.length > 0) throw new Error(`kits: the store was not sent the figures the ERP rows make (see ${daemon.child.logFile}): ${wrong.join('; ')}`);
  const first = run.writes[0]?.at ?? 0;
  const last = run.writes.at(-1)?.at ?? first;
  return {
    writes: run.writes.length,
    spanMs: last - first,
    perS: run.perS,
    cpuMsPerItem: round(run.cpuMsPerItem, 3),
    redisPerItem: round(run.redisPerItem, 1),
    redisCpuMsPerItem: round(run.redisCpuMsPerItem, 3),
    top: run.top,
  };
}

function daemonOf(env: BenchEnvironment, sim: SimulatorProcess, name: string, prefix: string, concurrency: number, inventory: Record<string, unknown> = {}): Promise<CliDaemon> {
  return startCliDaemon({
    root: env.root,
    logDir: env.logDir,
    name,
    storeUrl: sim.url,
    storeUser: STORE_USER,
    storePassword: STORE_PASSWORD,
    redisUrl: env.redis.url,
    prefix,
    erpUrl: env.erp.url,
    role: 'all',
    concurrency,
    execArgv: env.daemonExecArgv,
    inventory,
  });
}

/** The baseline: a daemon without kits, `changes` items changed (after as many at warm-up). */
async function itemCell(env: BenchEnvironment, sim: SimulatorProcess, log: WriteLog, options: KitsBenchOptions, logLine: (line: string) => void): Promise<Cell> {
  await env.erp.clear();
  const daemon = await daemonOf(env, sim, 'kits-item', `kits-item-${Date.now()}`, options.concurrency);
  try {
    const stocks = (first: number, value: number) => new Map(Array.from({ length: options.changes }, (_, i) => [sku(first + i), value + i] as const));
    const warm = stocks(options.changes + 1, 1);
    await checkedSync(env, log, daemon, warm, warm);
    const changes = stocks(1, 7);
    const cell = await checkedSync(env, log, daemon, changes, changes);
    logLine(`kits: item daemon, ${cell.writes} item writes: ${cell.perS}/s, ${cell.cpuMsPerItem} ms CPU, ${cell.redisPerItem} Redis commands (${JSON.stringify(cell.top)}), ${cell.redisCpuMsPerItem} ms Redis CPU per write`);
    return cell;
  } finally {
    await daemon.stop();
  }
}

/** The kit daemon: the catalog, the setup sync, then the kit cell and the fan-out cell. */
async function kitCells(env: BenchEnvironment, sim: SimulatorProcess, log: WriteLog, options: KitsBenchOptions, logLine: (line: string) => void): Promise<{ kit: Cell; hot: Cell; setupS: number }> {
  await env.erp.clear();
  const prefix = `kits-kit-${Date.now()}`;
  const redis = createRedis(env.redis.url);
  try {
    const write = await writeComposition(redis, prefix, 'kits', compositionRows());
    logLine(`kits: catalog of ${write.kits} kits written (${write.changed.length} resolved, ${write.cycles.length} cycles)`);
  } finally {
    redis.disconnect();
  }
  const kitsSource = { name: 'kits', kind: 'sql', url: env.erp.url, schedule: '0 0 0 1 1 *', snapshot: 'SELECT kit, component, quantity FROM kits' };
  const daemon = await daemonOf(env, sim, 'kits-kit', prefix, options.concurrency, { kits: [kitsSource] });
  try {
    // Setup, not counted: the stock of the components of the kits the cells touch (the first of each
    // kit 1,000 + j, HOT 500, the rest plenty); the other kits' components stay unknown to the ERP (those
    // kits show 0) and are never changed, so the catalog is whole but the setup syncs a fraction of it.
    const stocks = new Map<string, number>();
    for (let j = 1; j <= HOT_KITS + options.changes; j += 1) QUANTITIES.forEach((_, n) => stocks.set(componentOf(j, n), n === 0 ? 1000 + j : PLENTY));
    stocks.set(HOT, 500);
    const started = Date.now();
    await log.mark();
    await insertStocks(env, stocks);
    // Kits wait for the daemon's first complete sales pull (README, "No kit figure before the first sales
    // pull"; the default schedule, every 2 minutes): the setup lasts until it has queued them.
    const redis = createRedis(env.redis.url);
    try {
      await waitFor(async () => (await redis.exists(firstSalesPullKey(prefix))) === 1, { timeoutMs: 180_000, intervalMs: 500, message: 'the first sales pull of the kit daemon' });
    } finally {
      redis.disconnect();
    }
    // Each component once; a kit once or more as its components arrive (or not, should the store already hold its figure).
    await log.quiet(5000, 900_000);
    const setupS = round((Date.now() - started) / 1000, 1);
    logLine(`kits: setup sync of ${stocks.size} components and their ${HOT_KITS + options.changes} kits in ${setupS} s (not counted)`);

    // The kit cell: the first component of kits HOT_KITS+1 … HOT_KITS+changes, one unit more each.
    const changes = new Map<string, number>();
    const expected = new Map<string, number>();
    for (let j = HOT_KITS + 1; j <= HOT_KITS + options.changes; j += 1) {
      const code = componentOf(j, 0);
      stocks.set(code, (stocks.get(code) ?? 0) + 1);
      changes.set(code, stocks.get(code) ?? 0);
      expected.set(code, stocks.get(code) ?? 0);
      expected.set(kitCode(j), kitFigure(j, stocks));
    }
    const kit = await checkedSync(env, log, daemon, changes, expected);
    logLine(`kits: kit daemon, ${options.changes} component changes → ${kit.writes} writes (components and their kits): ${kit.perS}/s, ${kit.cpuMsPerItem} ms CPU, ${kit.redisPerItem} Redis commands (${JSON.stringify(kit.top)}), ${kit.redisCpuMsPerItem} ms Redis CPU per write`);

    // The fan-out: HOT one unit more, the limit of its 1,000 kits.
    stocks.set(HOT, (stocks.get(HOT) ?? 0) + 1);
    const hotExpected = new Map<string, number>([[HOT, stocks.get(HOT) ?? 0]]);
    for (let j = 1; j <= HOT_KITS; j += 1) hotExpected.set(kitCode(j), kitFigure(j, stocks));
    const hot = await checkedSync(env, log, daemon, new Map([[HOT, stocks.get(HOT) ?? 0]]), hotExpected);
    logLine(`kits: one change of a component in ${HOT_KITS} kits → ${hot.writes} writes in ${hot.spanMs} ms: ${hot.cpuMsPerItem} ms CPU, ${hot.redisPerItem} Redis commands (${JSON.stringify(hot.top)}) per write`);
    return { kit, hot, setupS };
  } finally {
    await daemon.stop();
  }
}

/** Runs the row and returns the result to store. */
export async function kitsBench(env: BenchEnvironment, options: KitsBenchOptions, logLine: (line: string) => void): Promise<Omit<BenchResult, 'run'>> {
  const sim = await startSimulatorProcess({ root: env.root, logDir: env.logDir, name: 'kits-simulator', items: COMPONENTS + 1 + KITS, password: STORE_PASSWORD });
  try {
    const log = new WriteLog(sim);
    await env.erp.pool.query('CREATE TABLE IF NOT EXISTS kits (kit text NOT NULL, component text NOT NULL, quantity double precision NOT NULL)');
    const item = await itemCell(env, sim, log, options, logLine);
    const { kit, hot, setupS } = await kitCells(env, sim, log, options, logLine);
    return { name: 'kits', summary: summarize(options, item, kit, hot), data: { options, catalog: { components: COMPONENTS, kits: KITS, hotKits: HOT_KITS }, band: BAND, setupS, item, kit, hot } };
  } finally {
    await sim.stop();
  }
}

function summarize(options: KitsBenchOptions, item: Cell, kit: Cell, hot: Cell): BenchResult['summary'] {
  const cost = (c: Cell): string => `${c.cpuMsPerItem} ms daemon CPU, ${c.redisPerItem} Redis commands, ${c.redisCpuMsPerItem} ms Redis CPU`;
  const within = (value: number, base: number, band: number): boolean => value <= base + band;
  const checks = { cpu: within(kit.cpuMsPerItem, item.cpuMsPerItem, BAND.cpuMs), commands: within(kit.redisPerItem, item.redisPerItem, BAND.commands), redisCpu: within(kit.redisCpuMsPerItem, item.redisCpuMsPerItem, BAND.redisCpuMs) };
  const missed = Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name);
  return [
    { measure: `plain items (no kits): cost per store write, ${item.writes} items, concurrency ${options.concurrency}, 0 ms store latency`, value: cost(item), baseline: '—', verdict: `${item.perS}/s` },
    {
      measure: `${KITS.toLocaleString('en')} kits over ${COMPONENTS.toLocaleString('en')} components: cost per store write, ${options.changes} component changes → ${kit.writes} writes (each component and its kit)`,
      value: cost(kit),
      baseline: cost(item),
      verdict: `CPU ${ratio(kit.cpuMsPerItem, item.cpuMsPerItem)}×, commands ${ratio(kit.redisPerItem, item.redisPerItem)}×, Redis CPU ${ratio(kit.redisCpuMsPerItem, item.redisCpuMsPerItem)}× (${missed.length === 0 ? `no higher, bands +${BAND.cpuMs} ms, +${BAND.commands}, +${BAND.redisCpuMs} ms` : `higher: ${missed.join(', ')}`})`,
    },
    {
      measure: `one change of a component in ${HOT_KITS.toLocaleString('en')} of the ${KITS.toLocaleString('en')} kits: kits re-queued and written`,
      value: `${hot.writes - 1} kit writes in ${hot.spanMs} ms; ${cost(hot)} per write`,
      baseline: `per write of the kit cell: ${cost(kit)}`,
      verdict: `exactly the kits containing it (every write checked); commands per write ${ratio(hot.redisPerItem, kit.redisPerItem)}× the kit cell's: O(kits containing it), no scan of the catalog`,
    },
  ];
}
