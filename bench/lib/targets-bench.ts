/**
 * Issue 20's row: what one target `(Code, SiteId, price list)` costs `storesync run`, against what one
 * item costs it with one site and the default list, in the same run, against the same simulator.
 *
 * - The baseline (`item`): the daemon as the cli benchmark runs it, T changed rows of the change log (a
 *   stock and a price each), T PUTs.
 * - The row (`target`): `inventory.sites` 1, 2, 3 (shared allocation) and `inventory.priceLists` of two
 *   lists; ERPNext-shaped tables (`targets-erp.ts`): N rows of `tabBin` without a site (3N stock
 *   targets) and 2N rows of `tabItem Price` (2 lists × 3 sites: 6N price targets), N = T / 9.
 *
 * Both face one simulator child started with items per site [1, 2, 3] and the two lists, at the cli
 * benchmark's main cell (20 ms, concurrency 16). Each arm runs in a fresh daemon that first syncs
 * `warmUpWrites` writes of its own kind at 0 ms, not counted, then the raw undici loop sends the very
 * PUTs the daemon must send (the ceiling), then the daemon syncs them; the cost per store write is read
 * as the cli benchmark reads it (`sync-cost.ts`). Every write of every sync is checked against the
 * bodies expected (`target-writes.ts`): a target missing, twice, or with another SiteId, list or value
 * fails the run instead of giving a figure. Rounds alternate the arms (item, target, target, item, …)
 * and each figure is the best of its arm's rounds, as the throughput benchmark keeps its best.
 */
import { type CliDaemon, startCliDaemon } from './cli-daemon.js';
import { type BenchEnvironment, STORE_PASSWORD, STORE_USER } from './environment.js';
import { freshBodies, WARM_UP_FIRST_SKU } from './put-bodies.js';
import { login, type PutBody, rawPutLoop } from './raw-loops.js';
import type { BenchResult } from './results.js';
import { type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';
import { rate, ratio, round } from './stats.js';
import { measureSync, type SyncCost } from './sync-cost.js';
import { fanOut, writeProblems } from './target-writes.js';
import { TargetsErp, targetsSources } from './targets-erp.js';
import { WriteLog } from './write-log.js';

/** The sites of the row (`inventory.sites`, the simulator's items per site). */
export const SITES: readonly number[] = [1, 2, 3];
/** The price lists of the row (ERPNext's default selling list and a second one). */
export const PRICE_LISTS: ReadonlyArray<{ id: number; code: string }> = [
  { id: 1, code: 'Standard Selling' },
  { id: 2, code: 'Wholesale' },
];
/** Targets per Code in the row: a stock target per site, a price target per list and site. */
export const TARGETS_PER_CODE = SITES.length * (1 + PRICE_LISTS.length);

/**
 * The noise bands of "no higher", from the run-to-run spread the README reads on this machine
 * ("Reading the figures"): CPU per item at 20 ms ±0.2 ms, a ratio to the raw loop at concurrency 16–32
 * ±0.1, Redis commands per item 17.9–19.2 across cells, redis-server CPU per item 0.095–0.12 ms at 20 ms.
 */
const BAND = { cpuMs: 0.2, commands: 1, redisCpuMs: 0.05, ratio: 0.1 } as const;
/** No write for this long after the last expected one: a target sent twice would have come by then (polls are 1 s apart). */
const QUIET_MS = 2000;

/** The row's size and the cell it runs at. */
export interface TargetsBenchOptions {
  /** Codes of the row (× `TARGETS_PER_CODE` targets); the baseline syncs as many items as the row has targets. */
  codes: number;
  latencyMs: number;
  concurrency: number;
  /** Store writes each daemon makes at 0 ms before its cell, not counted (0: none). */
  warmUpWrites: number;
  /** Rounds of both arms, alternated; each figure is the best of its arm's rounds. */
  rounds: number;
}

type Arm = 'item' | 'target';

/** One arm's measured cell: figures per store write (an item, or a target). */
export interface TargetsCell {
  arm: Arm;
  round: number;
  writes: number;
  rawPerS: number;
  perS: number;
  daemonCpuMs: number;
  redisCommands: number;
  redisCpuMs: number;
  redisTopCommands: Record<string, number>;
  /** Writes per site and list, as checked. */
  fanOut: Record<string, number>;
}

/** One sync's ERP rows and the PUTs they must give (the raw loop sends the same bodies). */
interface Work {
  bodies: PutBody[];
  insert(): Promise<void>;
}

/** What every cell uses. */
interface Context {
  env: BenchEnvironment;
  erp: TargetsErp;
  sim: SimulatorProcess;
  hash: string;
  writes: WriteLog;
  options: TargetsBenchOptions;
}

/** `items` changed rows of the change log, a stock and a price each, 1 ms apart and ending now. */
function itemWork(env: BenchEnvironment, items: number, first: number): Work {
  const bodies = freshBodies(items, first);
  return {
    bodies,
    insert: () => {
      const now = Date.now();
      return env.erp.insert(bodies.map((b, i) => ({ code: b.Code, stock: b.Stock as number, price: b.Price as number, at: now - bodies.length + i })));
    },
  };
}

/** `codes` items' stock rows (no site) and price rows (one per list), 1 ms apart and ending now, and their targets' PUTs. */
function targetWork(erp: TargetsErp, codes: number, first: number): Work {
  const items = freshBodies(codes, first);
  // The n-th list 10 % below the one before, so that a price written to the wrong list is seen.
  const listPrice = (price: number, n: number): number => round(price * 0.9 ** n);
  const bodies = items.flatMap(({ Code, Stock, Price }) => [
    ...SITES.map((SiteId): PutBody => ({ InternalId: 0, Code, SiteId, Stock: Stock as number })),
    ...PRICE_LISTS.flatMap((list, n) =>
      SITES.map((SiteId): PutBody => ({ InternalId: 0, Code, SiteId, PriceListId: list.id, PriceListCode: list.code, Price: listPrice(Price as number, n) })),
    ),
  ]);
  return {
    bodies,
    insert: () => {
      const rowsPerCode = 1 + PRICE_LISTS.length;
      const start = Date.now() - codes * rowsPerCode;
      const bins = items.map((item, i) => ({ code: item.Code, qty: item.Stock as number, at: start + i * rowsPerCode }));
      const prices = items.flatMap((item, i) =>
        PRICE_LISTS.map((list, n) => ({ code: item.Code, priceList: list.code, rate: listPrice(item.Price as number, n), at: start + i * rowsPerCode + 1 + n })),
      );
      return erp.insert(bins, prices);
    },
  };
}

/** The work of `writes` store writes of an arm (rounded up to whole Codes for the row). */
function workOf(ctx: Context, arm: Arm, writes: number, first: number): Work {
  return arm === 'item' ? itemWork(ctx.env, writes, first) : targetWork(ctx.erp, Math.ceil(writes / TARGETS_PER_CODE), first);
}

/** Syncs `work`, checks every write it made (and that none follows), and returns its cost. */
async function checkedSync(ctx: Context, daemon: CliDaemon, work: Work): Promise<SyncCost> {
  const run = await measureSync(ctx.env, ctx.writes, [daemon], () => work.insert(), work.bodies.length, 120_000);
  const late = await ctx.writes.quiet(QUIET_MS, 60_000);
  const problems = writeProblems(work.bodies, [...run.writes, ...late]);
  if (problems.length > 0) throw new Error(`the store was not sent what the ERP rows make (see ${daemon.child.logFile}): ${problems.join('; ')}`);
  return run;
}

/** Starts a fresh daemon of `arm` on empty tables, warms it up, and measures its cell. */
async function runCell(ctx: Context, arm: Arm, roundNo: number, logLine: (line: string) => void): Promise<TargetsCell> {
  const { env, options } = ctx;
  await (arm === 'item' ? env.erp.clear() : ctx.erp.clear());
  const name = `targets-${arm}-r${roundNo}`;
  const daemon = await startCliDaemon({
    root: env.root,
    logDir: env.logDir,
    name,
    storeUrl: ctx.sim.url,
    storeUser: STORE_USER,
    storePassword: STORE_PASSWORD,
    redisUrl: env.redis.url,
    prefix: `${name}-${Date.now()}`,
    erpUrl: env.erp.url,
    role: 'all',
    concurrency: options.concurrency,
    execArgv: env.daemonExecArgv,
    ...(arm === 'target'
      ? { inventory: { sites: SITES.map((siteId) => ({ siteId })), allocation: 'shared', priceLists: PRICE_LISTS, sources: targetsSources(env.erp.url) } }
      : {}),
  });
  try {
    if (options.warmUpWrites > 0) {
      await ctx.sim.setFaults({ latencyMs: 0, jitterMs: 0 });
      const warm = await checkedSync(ctx, daemon, workOf(ctx, arm, options.warmUpWrites, WARM_UP_FIRST_SKU));
      logLine(`targets: ${arm} daemon, round ${roundNo}, warm-up (not counted) of ${warm.writes.length} writes at 0 ms: ${warm.perS}/s, ${round(warm.cpuMsPerItem, 3)} ms CPU per write`);
    }
    await ctx.sim.setFaults({ latencyMs: options.latencyMs, jitterMs: 0 });
    const total = options.codes * TARGETS_PER_CODE;
    const rawWork = workOf(ctx, arm, total, 1);
    const raw = await rawPutLoop(ctx.sim.url, ctx.hash, rawWork.bodies, options.concurrency);
    if (raw.failed > 0) throw new Error(`the raw loop's ${arm} PUTs: ${raw.failed} of ${raw.sent} failed`);
    const run = await checkedSync(ctx, daemon, workOf(ctx, arm, total, 1));
    const cell: TargetsCell = {
      arm,
      round: roundNo,
      writes: run.writes.length,
      rawPerS: rate(raw.sent, raw.ms),
      perS: run.perS,
      daemonCpuMs: round(run.cpuMsPerItem, 3),
      redisCommands: round(run.redisPerItem, 1),
      redisCpuMs: round(run.redisCpuMsPerItem, 3),
      redisTopCommands: run.top,
      fanOut: fanOut(run.writes),
    };
    logLine(
      `targets: ${arm} daemon, round ${roundNo}, ${cell.writes} writes at ${options.latencyMs} ms, concurrency ${options.concurrency}: ${cell.perS}/s vs raw ${cell.rawPerS}/s; ` +
        `per write ${cell.daemonCpuMs} ms daemon CPU, ${cell.redisCommands} Redis commands (${JSON.stringify(cell.redisTopCommands)}), ${cell.redisCpuMs} ms Redis CPU; ` +
        `every write checked: ${JSON.stringify(cell.fanOut)}`,
    );
    return cell;
  } finally {
    await daemon.stop();
  }
}

/** Runs both arms for `options.rounds` rounds and returns the result to store. */
export async function targetsBench(env: BenchEnvironment, options: TargetsBenchOptions, logLine: (line: string) => void): Promise<Omit<BenchResult, 'run'>> {
  const total = options.codes * TARGETS_PER_CODE;
  // Measured SKUs are 1…total, warm-up SKUs start at WARM_UP_FIRST_SKU: they must not meet.
  if (total >= WARM_UP_FIRST_SKU) throw new Error(`targets: ${total} targets overlap the warm-up SKUs (${WARM_UP_FIRST_SKU} on)`);
  const sim = await startSimulatorProcess({
    root: env.root,
    logDir: env.logDir,
    name: 'targets-simulator',
    items: WARM_UP_FIRST_SKU + options.warmUpWrites,
    password: STORE_PASSWORD,
    itemsPerSite: SITES,
    priceLists: PRICE_LISTS,
  });
  try {
    const erp = new TargetsErp(env.erp.pool);
    await erp.prepare();
    const ctx: Context = { env, erp, sim, hash: await login(sim.url, STORE_USER, STORE_PASSWORD), writes: new WriteLog(sim), options };
    logLine(`targets: simulator ${sim.url} with items per site ${SITES.join(',')} and price lists ${PRICE_LISTS.map((l) => `${l.id}:${l.code}`).join(',')}`);
    const cells: TargetsCell[] = [];
    for (let r = 1; r <= options.rounds; r += 1) {
      // item, target, target, item, …: a drift of the machine's load weighs on both arms alike.
      const arms: Arm[] = r % 2 === 1 ? ['item', 'target'] : ['target', 'item'];
      for (const arm of arms) cells.push(await runCell(ctx, arm, r, logLine));
    }
    const item = best(cells.filter((c) => c.arm === 'item'));
    const target = best(cells.filter((c) => c.arm === 'target'));
    return { name: 'targets', summary: summarize(options, item, target), data: { options, sites: SITES, priceLists: PRICE_LISTS, band: BAND, best: { item, target }, cells } };
  } finally {
    await sim.stop();
  }
}

/** The best figures of an arm's rounds: noise only ever slows a run down and adds to its cost. */
export interface ArmFigures {
  rounds: number;
  writes: number;
  rawPerS: number;
  perS: number;
  /** The best rate over the best raw loop, as the throughput benchmark pairs them. */
  ratio: number;
  /** Each round's rate over the raw loop run just before it, as a cli cell pairs them. */
  roundRatios: number[];
  daemonCpuMs: number;
  redisCommands: number;
  redisCpuMs: number;
  fanOut: Record<string, number>;
}

function best(cells: readonly TargetsCell[]): ArmFigures {
  const min = (pick: (c: TargetsCell) => number) => Math.min(...cells.map(pick));
  const max = (pick: (c: TargetsCell) => number) => Math.max(...cells.map(pick));
  const perS = max((c) => c.perS);
  const rawPerS = max((c) => c.rawPerS);
  return {
    rounds: cells.length,
    writes: cells[0]?.writes ?? 0,
    rawPerS,
    perS,
    ratio: ratio(perS, rawPerS),
    roundRatios: cells.map((c) => ratio(c.perS, c.rawPerS)),
    daemonCpuMs: min((c) => c.daemonCpuMs),
    redisCommands: min((c) => c.redisCommands),
    redisCpuMs: min((c) => c.redisCpuMs),
    fanOut: cells[0]?.fanOut ?? {},
  };
}

function summarize(options: TargetsBenchOptions, item: ArmFigures, target: ArmFigures): BenchResult['summary'] {
  const { codes, latencyMs, concurrency } = options;
  const at = `latency ${latencyMs} ms, concurrency ${concurrency}`;
  const of = item.rounds > 1 ? `, best of ${item.rounds} rounds` : '';
  const versusRaw = (f: ArmFigures): string => {
    const pairs = f.roundRatios.length > 1 ? `; each round against its own raw loop ${f.roundRatios.join(', ')}` : '';
    return `${f.ratio} (${f.ratio >= 0.95 ? 'goal ≥ 0.95 met' : `goal ≥ 0.95 missed by ${round(0.95 - f.ratio, 3)}`}${pairs})`;
  };
  const goal = (f: ArmFigures): string => {
    const cpu = f.daemonCpuMs <= 0.5 ? 'met' : `missed (${round(f.daemonCpuMs / 0.5, 1)}×)`;
    const commands = f.redisCommands <= 20 ? 'met' : `missed (${round(f.redisCommands / 20, 1)}×)`;
    return `CPU ${cpu}, commands ${commands}`;
  };
  const cost = (f: ArmFigures): string => `${f.daemonCpuMs} ms daemon CPU, ${f.redisCommands} Redis commands, ${f.redisCpuMs} ms Redis CPU`;
  const higher = (value: number, base: number, band: number): string => (value <= base + band ? `no higher (band +${band})` : `higher by ${round(value - base, 3)} (band +${band})`);
  const checks = {
    cpu: target.daemonCpuMs <= item.daemonCpuMs + BAND.cpuMs,
    commands: target.redisCommands <= item.redisCommands + BAND.commands,
    redisCpu: target.redisCpuMs <= item.redisCpuMs + BAND.redisCpuMs,
    rate: target.ratio >= item.ratio - BAND.ratio,
  };
  const missed = Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name);
  const sites = `${SITES.length} sites (shared) × ${PRICE_LISTS.length} price lists`;
  return [
    {
      measure: `one site, default price list: storesync run updates/s, ${item.writes} items (a stock and a price row each), ${at}${of}`,
      value: `${item.perS}/s`,
      baseline: `raw undici loop ${item.rawPerS}/s`,
      verdict: versusRaw(item),
    },
    { measure: 'one site, default price list: cost per synced item', value: cost(item), baseline: 'goal ≤ 0.5 ms CPU, ≤ 20 commands', verdict: goal(item) },
    {
      measure: `${sites}: storesync run target writes/s, ${codes} Codes → ${codes * SITES.length} stock + ${codes * SITES.length * PRICE_LISTS.length} price targets (tabBin without SiteId, tabItem Price by PriceListCode), ${at}${of}`,
      value: `${target.perS}/s`,
      baseline: `raw undici loop, the same ${target.writes} PUTs ${target.rawPerS}/s`,
      verdict: versusRaw(target),
    },
    { measure: `${sites}: cost per synced target`, value: cost(target), baseline: 'goal ≤ 0.5 ms CPU, ≤ 20 commands', verdict: goal(target) },
    {
      measure: 'daemon CPU per target vs per item',
      value: `${target.daemonCpuMs} ms`,
      baseline: `${item.daemonCpuMs} ms per item`,
      verdict: `${ratio(target.daemonCpuMs, item.daemonCpuMs)}× (${higher(target.daemonCpuMs, item.daemonCpuMs, BAND.cpuMs)} ms)`,
    },
    {
      measure: 'Redis commands per target vs per item',
      value: `${target.redisCommands}`,
      baseline: `${item.redisCommands} per item`,
      verdict: `${ratio(target.redisCommands, item.redisCommands)}× (${higher(target.redisCommands, item.redisCommands, BAND.commands)})`,
    },
    {
      measure: 'redis-server CPU per target vs per item',
      value: `${target.redisCpuMs} ms`,
      baseline: `${item.redisCpuMs} ms per item`,
      verdict: `${ratio(target.redisCpuMs, item.redisCpuMs)}× (${higher(target.redisCpuMs, item.redisCpuMs, BAND.redisCpuMs)} ms)`,
    },
    {
      measure: 'updates/s per target vs per item',
      value: `${target.perS}/s (${target.ratio} of its raw loop)`,
      baseline: `${item.perS}/s (${item.ratio} of its raw loop)`,
      verdict: `${ratio(target.perS, item.perS)}× (ratio to raw ${target.ratio >= item.ratio - BAND.ratio ? 'no lower' : 'lower'} than the item's, band −${BAND.ratio})`,
    },
    {
      measure: 'store writes checked in every sync (each target once, with its SiteId, PriceListId, PriceListCode and value; nothing after)',
      value: Object.entries(target.fanOut).map(([name, n]) => `${name}: ${n}`).join(', '),
      baseline: `${codes} Codes × ${TARGETS_PER_CODE} targets = ${codes * TARGETS_PER_CODE}`,
      verdict: 'exact (a missing, repeated or wrong write fails the run)',
    },
    {
      measure: 'goal (issue 20): per target no higher than per item with one site',
      value: `CPU ${ratio(target.daemonCpuMs, item.daemonCpuMs)}×, commands ${ratio(target.redisCommands, item.redisCommands)}×, Redis CPU ${ratio(target.redisCpuMs, item.redisCpuMs)}×, rate ${ratio(target.perS, item.perS)}×`,
      baseline: `same run; bands +${BAND.cpuMs} ms CPU, +${BAND.commands} command, +${BAND.redisCpuMs} ms Redis CPU, −${BAND.ratio} ratio to raw`,
      verdict: missed.length === 0 ? 'met' : `missed: ${missed.join(', ')}`,
    },
  ];
}
