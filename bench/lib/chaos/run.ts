/**
 * The chaos run: the real daemons (`storesync run` processes) syncing a real PostgreSQL ERP and the
 * simulator while the run breaks things — a faulty store (500s, 429s, jitter, short-lived hashes),
 * workers SIGKILLed at random, Redis killed and restarted once (AOF on), the ERP database stopped for
 * a while — then a drain and the checks of checks.ts. Everything runs on loopback with a Redis and a
 * PostgreSQL of the run's own, is bounded in time, and is undone by the caller's `Cleanup`. With
 * `targets`, two sites and two price lists (targets.ts); with `kits`, kits sold alongside their components (kits.ts).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { waitFor } from '../../../src/wait-for.js';
import type { Cleanup } from '../cleanup.js';
import { startPgCluster } from '../pg-cluster.js';
import { between, seededRandom } from '../random.js';
import { sentinelRedis, singleRedis } from './chaos-redis.js';
import {
  checkDiffValues,
  checkFinalValues,
  checkInvalidNeverSent,
  checkNoFailedJobs,
  checkNoStaleWrites,
  checkRejectsRecorded,
  type CheckResult,
  checkSalesAckedOnce,
  checkSalesExportedOnce,
  checkSecretsAtRest,
  diffValueMismatches,
  finalValueMismatches,
  rejectedMetric,
  saleAcks,
  salesExportCounts,
} from './checks.js';
import { chaosConfig } from './config.js';
import { DiffDriver } from './diff-driver.js';
import { ErpDriver } from './erp-driver.js';
import { Fleet } from './fleet.js';
import { KitsRun } from './kits.js';
import { INITIAL_PRICE } from './price-driver.js';
import { RecoveryWatch } from './recovery.js';
import { TargetsRun } from './targets.js';

const run = promisify(execFile);

/** Sizes and timings of a run. */
export interface ChaosPlan {
  durationS: number;
  skus: number;
  changesPerS: number;
  /** SKUs of the table without a change column (the diff source), and writes to it per second. */
  diffSkus: number;
  diffWritesPerS: number;
  invalidRows: number;
  saleEveryMs: number;
  workers: number;
  /** Random pause between two worker kills. */
  killEveryMs: [number, number];
  /** When Redis is killed and restarted, as a share of the duration. */
  redisRestartAt: number;
  /** When the ERP database is stopped, as a share of the duration, and for how long. */
  erpDownAt: number;
  erpDownMs: number;
  /** Longest wait for the daemons to catch up after the disorder stops. */
  drainTimeoutS: number;
}

/** The CI version (~2 minutes) and the full one (~5 minutes). */
export const PLANS: Record<'quick' | 'full', ChaosPlan> = {
  quick: {
    durationS: 25,
    skus: 100,
    changesPerS: 40,
    diffSkus: 40,
    diffWritesPerS: 10,
    invalidRows: 6,
    saleEveryMs: 500,
    workers: 2,
    killEveryMs: [2500, 5000],
    redisRestartAt: 0.35,
    erpDownAt: 0.6,
    erpDownMs: 3000,
    drainTimeoutS: 100,
  },
  full: {
    durationS: 90,
    skus: 300,
    changesPerS: 60,
    diffSkus: 100,
    diffWritesPerS: 15,
    invalidRows: 20,
    saleEveryMs: 300,
    workers: 3,
    killEveryMs: [2000, 5000],
    redisRestartAt: 0.35,
    erpDownAt: 0.6,
    erpDownMs: 6000,
    drainTimeoutS: 180,
  },
};

/** How to run the chaos plan. */
export interface ChaosOptions {
  plan: ChaosPlan;
  seed: number;
  /** The package root (bin/storesync.js, built dist/). */
  root: string;
  log: (line: string) => void;
  /** Keep the logs folder (printed) instead of removing it. */
  keepLogs?: boolean;
  /** Sentinel (a primary, a replica, three sentinels) instead of one Redis; see chaos-redis.ts. */
  ha?: boolean;
  /** Two sites and two price lists (targets.ts). */
  targets?: boolean;
  /** Kits sold alongside their components (kits.ts). */
  kits?: boolean;
}

/** What a run found. */
export interface ChaosReport {
  checks: CheckResult[];
  stats: Record<string, unknown>;
  logDir: string;
}

const ACK_STATUS = 2;

/** Runs the chaos plan; everything started is registered on `cleanup`, which the caller runs. */
export async function runChaos(options: ChaosOptions, cleanup: Cleanup): Promise<ChaosReport> {
  const { plan, log, root } = options;
  const random = seededRandom(options.seed);
  const logDir = mkdtempSync(join(tmpdir(), 'storesync-chaos-'));
  if (!options.keepLogs) cleanup.defer('logs folder', () => rmSync(logDir, { recursive: true, force: true }));
  log(`seed ${options.seed}; logs in ${logDir}${options.keepLogs ? '' : ' (removed at the end; --keep-logs keeps them)'}`);
  const targets = options.targets ? new TargetsRun(options.seed) : undefined;
  if (targets) log(targets.describe());
  const kits = options.kits ? new KitsRun() : undefined;
  if (kits) log(kits.describe());

  // Our own Redis (AOF, fsync on every write) and PostgreSQL: both are killed or stopped on purpose.
  mkdirSync(join(logDir, 'redis'));
  const redisServer = options.ha ? await sentinelRedis(plan.redisRestartAt * 0.8, 0.75) : await singleRedis(join(logDir, 'redis'), plan.redisRestartAt);
  cleanup.defer('redis', () => redisServer.destroy());
  const pgCluster = await startPgCluster();
  cleanup.defer('postgresql', () => pgCluster.destroy());
  await pgCluster.createDatabase('erp');
  const erpUrl = pgCluster.url('erp');

  const password = `chaos-${randomBytes(9).toString('base64url')}`;
  const adminToken = `admin-${randomBytes(12).toString('hex')}`;
  const skus = Array.from({ length: plan.skus }, (_, i) => `SKU-${String(i + 1).padStart(6, '0')}`);
  const diffSkus = Array.from({ length: plan.diffSkus }, (_, i) => `DIFF-${String(i + 1).padStart(5, '0')}`);
  const sim: Simulator = await startSimulator({
    port: 0,
    items: [...skus, ...diffSkus, ...(kits?.codes ?? [])].map((Code) => ({ Code, Stock: 0, Price: INITIAL_PRICE })),
    sales: 0,
    users: 5,
    clients: 2,
    seed: options.seed,
    password,
    hashTtlS: 3,
    latencyMs: 1,
    jitterMs: 15,
    failRate: 0.05,
    rate429: 0.02,
    ...targets?.simOptions(),
  });
  cleanup.defer('simulator', () => sim.close());
  // Every hash the store issues is a secret to look for afterwards; they expire (and are forgotten) in 3 s.
  const hashes = new Set<string>();
  const issued = sim.state.hashes;
  const issue = issued.set.bind(issued);
  issued.set = (hash: string, at: number) => {
    hashes.add(hash);
    return issue(hash, at);
  };
  log(`${redisServer.describe}, postgresql ${erpUrl}, simulator ${sim.url}`);

  const driver = new ErpDriver({
    url: erpUrl,
    skus,
    rate: plan.changesPerS,
    lateShare: 0.1,
    maxLateMs: 2000,
    repeatShare: 0.05,
    invalidRows: plan.invalidRows,
    durationS: plan.durationS,
    random,
  });
  cleanup.defer('erp driver', () => driver.close());
  await driver.prepare();
  // Its own random stream, so that the changes driver and the disorder make the choices they made before it existed.
  // Under the mass guard's 10 targets: with two sites a row deleted is two targets gone.
  const maxAbsent = targets ? 5 : 8;
  const diffDriver = new DiffDriver({ url: erpUrl, skus: diffSkus, rate: plan.diffWritesPerS, deleteShare: 0.1, maxAbsent, random: seededRandom(options.seed + 1) });
  cleanup.defer('diff driver', () => diffDriver.close());
  await diffDriver.prepare();
  await targets?.preparePrices(erpUrl, skus, plan.changesPerS / 2, cleanup);
  await kits?.prepare(erpUrl);

  const prefix = 'chaos';
  const configFile = join(logDir, 'storesync.yaml');
  // The overlap must cover late commits (2 s) and the ERP outage, so no late row falls behind the cursor.
  writeFileSync(configFile, chaosConfig({ storeUrl: sim.url, redis: redisServer.config, prefix, erpUrl, overlapMs: plan.erpDownMs + 10_000, ...(targets ? { targets: targets.config() } : {}), ...(kits ? { kits: kits.source(erpUrl) } : {}) }));
  const env = { PATH: process.env.PATH ?? '', STORE_PASSWORD: password, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'info' };
  await run(process.execPath, [join(root, 'bin', 'storesync.js'), 'migrate', '--config', configFile], { env });

  const fleet = new Fleet({ root, configFile, logDir, workers: plan.workers, env });
  cleanup.defer('daemons', () => fleet.stop());
  await fleet.start();

  const saleIds: number[] = [];
  const startedAt = Date.now();
  const elapsed = (): number => (Date.now() - startedAt) / 1000;
  const events: string[] = [];
  const note = (line: string): void => {
    events.push(`${elapsed().toFixed(1)}s ${line}`);
    log(`  t+${elapsed().toFixed(1)}s ${line}`);
  };

  driver.start();
  diffDriver.start();
  targets?.startPrices();
  const sales = setInterval(() => {
    saleIds.push(sim.addSale({ Status: 1, SiteId: targets?.saleSite() ?? 1 }).Id);
    if (kits) saleIds.push(kits.placeSale(sim));
  }, plan.saleEveryMs);
  cleanup.defer('sales driver', () => clearInterval(sales));

  // Notes the jobs active at each kill; each must be taken up again within 20 s (the daemons' crash recovery).
  const watchRedis = redisServer.connect({ maxRetriesPerRequest: 1 });
  watchRedis.on('error', () => undefined);
  cleanup.defer('recovery watch redis', () => watchRedis.disconnect());
  const recovery = new RecoveryWatch(watchRedis, prefix, 20_000);

  // The disorder, until the end of the run.
  let nextKill = Date.now() + between(random, ...plan.killEveryMs);
  const faults = [...redisServer.faults];
  let erpStopped = false;
  while (elapsed() < plan.durationS) {
    if (Date.now() >= nextKill) {
      const victim = between(random, 0, plan.workers - 1);
      const pid = fleet.workerPid(victim);
      if (pid !== undefined) await recovery.beforeKill(`kill at t+${elapsed().toFixed(1)}s`, pid);
      const killed = await fleet.killWorker(victim);
      if (killed) note(`SIGKILL ${killed}`);
      await sleep(between(random, 300, 1500));
      const restarted = fleet.restartDead();
      if (restarted.length > 0) note(`started ${restarted.join(', ')}`);
      nextKill = Date.now() + between(random, ...plan.killEveryMs);
    }
    const fault = faults.find((one) => elapsed() >= plan.durationS * one.at);
    if (fault) {
      faults.splice(faults.indexOf(fault), 1);
      await fault.inject(note);
    }
    if (!erpStopped && elapsed() >= plan.durationS * plan.erpDownAt) {
      erpStopped = true;
      await pgCluster.stop();
      note('ERP database stopped');
      await sleep(plan.erpDownMs);
      await pgCluster.start();
      note('ERP database started again');
    }
    await sleep(100);
  }
  clearInterval(sales);
  await driver.stop(30_000);
  await diffDriver.stop();
  await targets?.stopPrices();
  const diffTruth = await diffDriver.truth();
  note(`disorder over: ${driver.model.rowsWritten} ERP rows, ${diffDriver.stats.rewrites + diffDriver.stats.deletions + diffDriver.stats.putBack} table writes, ${saleIds.length} sales; draining`);
  fleet.restartDead();

  // Drain: until every SKU and every sale is where it must be (the checks below say what is not).
  const redis = redisServer.connect();
  cleanup.defer('checker redis', () => redis.disconnect());
  const drained = await waitFor(
    async () => {
      fleet.restartDead();
      if (targets) {
        if (targets.mismatches(sim, driver.model, diffTruth).length > 0) return false;
      } else if ((kits ? kits.mismatches(sim, driver.model) : finalValueMismatches(sim, driver.model)).length > 0 || diffValueMismatches(sim, diffTruth).length > 0) return false;
      const exported = await salesExportCounts(erpUrl);
      const acks = saleAcks(sim, ACK_STATUS);
      return saleIds.every((id) => exported.get(id) === 1 && (acks.get(id) ?? 0) >= 1);
    },
    { timeoutMs: plan.drainTimeoutS * 1000, intervalMs: 1000, message: 'the daemons to catch up' },
  ).then(
    () => true,
    () => false,
  );
  note(drained ? 'drained' : `not drained within ${plan.drainTimeoutS} s`);
  // A moment for anything still in flight (a duplicate would show now), then a graceful stop.
  await sleep(2000);
  const rejectedCount = await rejectedMetric(fleet.producerUrl());
  // The recovery windows close while the daemons still run: a job held by a worker killed late in the
  // disorder is taken up by the stalled check of a running worker, which a stopped fleet never does
  // (seed 855600: a kill at t+23 s, the fleet stopped at t+34 s, the job still active at t+43 s).
  const recovered = await recovery.result();
  await fleet.stop();

  if (options.keepLogs) writeStoreDump(join(logDir, 'store.json'), sim, targets?.dump(sim));
  const exported = await salesExportCounts(erpUrl);
  const acks = saleAcks(sim, ACK_STATUS);
  const checks: CheckResult[] = [
    ...(targets
      ? targets.checks(sim, driver.model, diffTruth, diffDriver.stats.deletions)
      : [...(kits ? kits.checks(sim, driver.model) : [checkFinalValues(sim, driver.model)]), checkDiffValues(sim, diffTruth, diffDriver.stats), checkNoStaleWrites(sim, kits?.unversioned)]),
    checkInvalidNeverSent(sim, driver.model),
    await checkRejectsRecorded(redis, prefix, driver.model, rejectedCount),
    checkSalesExportedOnce(saleIds, exported),
    checkSalesAckedOnce(saleIds, acks),
    await checkNoFailedJobs(redis, prefix),
    recovered,
    await checkSecretsAtRest(redis, prefix, [password, adminToken, ...hashes], fleet.logFiles()),
    {
      name: `daemons: no process exited by itself (${fleet.kills} SIGKILLs given)`,
      ok: fleet.crashes.length === 0,
      detail: fleet.crashes.length === 0 ? 'only our kills' : fleet.crashes.join(' | '),
    },
  ];
  const counters = sim.counters();
  return {
    checks,
    logDir,
    stats: {
      seed: options.seed,
      seconds: Math.round(elapsed()),
      erp: { ...driver.model, latest: driver.model.latest.size, invalid: driver.model.invalid.length },
      diffTable: diffDriver.stats,
      sales: saleIds.length,
      kills: fleet.kills,
      hashesIssued: hashes.size,
      store: { requests: counters.total, injected500: counters.faults.serverError, injected429: counters.faults.tooManyRequests, unauthorized: counters.unauthorized, logins: counters.logins },
      writes: sim.writes.length,
      ...(targets ? { targets: targets.stats() } : {}),
      ...(kits ? { kits: kits.stats() } : {}),
      events,
    },
  };
}

/**
 * The store's side of a kept run (items' final Stock/Price, sales with their lines and creation time,
 * the write log), next to the Redis AOF: a failed check is explained by comparing the two.
 */
function writeStoreDump(file: string, sim: Simulator, targets?: Record<string, unknown>): void {
  const items = [...sim.state.items.values()].map(({ item }) => ({ code: item.Code, stock: item.Stock, price: item.Price }));
  const sales = sim.state.sales.map(({ sale, createdAtMs }) => ({
    id: sale.Id,
    siteId: sale.SiteId,
    status: sale.Status,
    createdAtMs,
    lines: (sale.Items ?? []).map((line) => ({ code: line.Code, quantity: line.Quantity })),
  }));
  writeFileSync(file, JSON.stringify({ items, sales, writes: sim.writes, ...targets }));
}
