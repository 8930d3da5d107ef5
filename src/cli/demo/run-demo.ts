/**
 * `storesync demo`: storesync working on one machine with nothing but Node. It finds, starts or
 * installs Redis (see local-redis.ts), starts the store simulator in-process, fills a sample ERP (CSV
 * drop folders in a temp directory, and a full "all items" export for the reconcile) and runs the
 * daemon with every role and `examples/demo/config.yaml`. It prints where to look, then either shows progress until stopped, or
 * (`once`) runs one full cycle and prints what it did.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadConfig, packageRoot } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { type Daemon, startDaemon } from '../../daemon.js';
import { createLogger, type Logger } from '../../log.js';
import { Metrics } from '../../metrics.js';
import { DASHBOARD_PATH } from '../../ops/http-server.js';
import { createRedis } from '../../queue/connection.js';
import { type Simulator, startSimulator } from '../../simulator/index.js';
import type { CliIo } from '../context.js';
import { type CycleReport, formatCycleReport, runDemoCycle } from './demo-cycle.js';
import { copySampleExports, createErpFolders, type ErpFolders, exportedSaleIds, writeShipments, writeStockChanges } from './erp-feed.js';
import { writeErpSnapshot } from './erp-snapshot.js';
import { ensureRedis, systemProbes } from './local-redis.js';

/** Items the simulator holds (SKU-000001 …), matching the sample exports. */
const ITEMS = 200;

/** Source names in `examples/demo/config.yaml`. */
const SOURCES = { inventory: 'demo-erp', shipments: 'demo-shipments' };

/** What the demo is running, for tests that look inside. */
export interface DemoHandles {
  config: Readonly<Config>;
  daemon: Daemon;
  simulator: Simulator;
  folders: ErpFolders;
  /** The ERP's full export the reconcile reads, and the SKUs made to differ from the store in it. */
  snapshot: { file: string; drifted: string[] };
  token: string;
}

/** Options of `runDemo`. */
export interface DemoOptions {
  io: CliIo;
  /** Run one cycle and stop. */
  once: boolean;
  /** HTTP port of the daemon (0: any free one). */
  port: number;
  /** Key prefix in Redis; the demo empties it at start and removes its keys on exit. */
  prefix: string;
  /** Log level of the daemon's log lines (on stderr). */
  logLevel?: Config['log']['level'];
  /** Called once everything runs, and before shutdown; tests use them to look inside. */
  hooks?: { started?(handles: DemoHandles): void; stopping?(handles: DemoHandles): Promise<void> };
}

/** Deletes the keys under `prefix:` (SCAN, never KEYS). */
async function clearPrefix(url: string, prefix: string): Promise<void> {
  const redis = createRedis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

function banner(handles: DemoHandles, redisUrl: string, once: boolean): string {
  const { daemon, simulator, folders, token } = handles;
  const lines = [
    once ? 'storesync demo: running one cycle' : 'storesync demo is running',
    `  dashboard  ${daemon.url}${DASHBOARD_PATH}`,
    `  metrics    ${daemon.url}/metrics    health: ${daemon.url}/readyz`,
    `  store      ${simulator.url}  (simulator: ${simulator.url}/__control/writes lists what storesync wrote)`,
    `  ERP        ${folders.inventory}  (drop CSV exports here; sales arrive in ${folders.sales})`,
    `  snapshot   ${handles.snapshot.file}  (the ERP's full export for the reconcile; ${handles.snapshot.drifted.length} items differ from the store on purpose)`,
    `  Redis      ${redisUrl}  prefix ${handles.config.redis.prefix}`,
  ];
  if (!once) {
    lines.push(`  admin token  ${token}`, `    (the dashboard's login page asks for it; scripts send "Authorization: Bearer <token>")`, '', 'Ctrl-C stops the demo.');
  }
  return `${lines.join('\n')}\n\n`;
}

/** Writes the full export where the demo config's ERP source expects it (`snapshotFile`). */
async function writeSnapshot(config: Config, samplesDir: string): Promise<DemoHandles['snapshot']> {
  const source = config.inventory.sources.find((s) => s.name === SOURCES.inventory);
  if (source?.kind !== 'csv' || source.snapshotFile === undefined) {
    throw new Error(`demo: the config's inventory source ${SOURCES.inventory} must be a csv source with a snapshotFile`);
  }
  const file = source.snapshotFile;
  return { file, drifted: await writeErpSnapshot(samplesDir, { ...source, snapshotFile: file }) };
}

/** Every few seconds: new ERP stock changes, a new sale on the store, shipments for exported sales. */
function startFeed(handles: DemoHandles, logger: Logger): () => void {
  const shipped = new Set<number>();
  const timer = setInterval(() => {
    void (async () => {
      await writeStockChanges(handles.folders.inventory, 5, ITEMS);
      handles.simulator.addSale({ Status: 1, StatusText: 'Confirmed', SiteId: 1 });
      const fresh = (await exportedSaleIds(handles.folders.sales)).filter((id) => !shipped.has(id));
      fresh.forEach((id) => shipped.add(id));
      await writeShipments(handles.folders.shipments, fresh);
    })().catch((error: unknown) => logger.warn({ err: error }, 'demo feed failed'));
  }, 10_000);
  return () => clearInterval(timer);
}

/** Every 5 seconds, a progress line when something moved. */
function startProgress(handles: DemoHandles, io: CliIo): () => void {
  let last = '';
  const timer = setInterval(() => {
    void (async () => {
      const items = new Set(handles.simulator.writes.map((write) => write.code)).size;
      const sales = (await exportedSaleIds(handles.folders.sales)).length;
      const updates = handles.simulator.saleUpdates;
      // Every sale update carries the current tracking code (the complete structure): shipped = one is set.
      const shipped = new Set(updates.filter((update) => typeof update.fields.TrackingCode === 'string' && update.fields.TrackingCode !== '').map((update) => update.saleId)).size;
      const line = `${handles.simulator.writes.length} inventory writes (${items} items), ${sales} sales exported, ${updates.length} sale updates (${shipped} shipped)`;
      if (line !== last) io.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
      last = line;
    })();
  }, 5000);
  return () => clearInterval(timer);
}

/** Runs the demo; with `once`, resolves with what the cycle did. */
export async function runDemo(options: DemoOptions): Promise<CycleReport | undefined> {
  const { io } = options;
  const redis = await ensureRedis(
    { url: io.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', announce: (line) => io.stdout.write(`${line}\n`) },
    systemProbes(io.env),
  );
  const root = await mkdtemp(join(tmpdir(), 'storesync-demo-'));
  const cleanups: Array<() => Promise<void>> = [() => redis.stop(), () => rm(root, { recursive: true, force: true })];
  try {
    await clearPrefix(redis.url, options.prefix);
    // Run after the daemon has stopped (cleanups run first to last, each new one first): the demo leaves
    // no key behind, whether it ends with --once, Ctrl-C, SIGTERM or an error.
    cleanups.unshift(() => clearPrefix(redis.url, options.prefix));
    const simulator = await startSimulator({ port: 0, items: ITEMS });
    cleanups.unshift(() => simulator.close());
    for (let i = 0; i < 3; i += 1) simulator.addSale({ Status: 1, StatusText: 'Confirmed', SiteId: 1 });

    const folders = await createErpFolders(root);
    const samplesDir = join(packageRoot(), 'examples', 'erp', 'inventory');
    await copySampleExports(samplesDir, folders.inventory);
    const token = randomBytes(24).toString('base64url');
    const config = loadConfig({
      env: { STORESYNC_DEMO_DIR: root },
      configFile: join(packageRoot(), 'examples', 'demo', 'config.yaml'),
      overrides: {
        store: { baseUrl: simulator.url },
        redis: { url: redis.url, prefix: options.prefix },
        http: { host: '127.0.0.1', port: options.port },
        admin: { token },
        ...(options.logLevel ? { log: { level: options.logLevel } } : {}),
      },
    });
    const snapshot = await writeSnapshot(config, samplesDir);
    const logger = createLogger({ level: config.log.level, destination: io.stderr });
    const daemon = await startDaemon({ config, logger, metrics: new Metrics() }, { role: 'all' });
    cleanups.unshift(() => daemon.close());
    const handles: DemoHandles = { config, daemon, simulator, folders, snapshot, token };
    options.hooks?.started?.(handles);
    io.stdout.write(banner(handles, redis.url, options.once));

    let report: CycleReport | undefined;
    if (options.once) {
      report = await runDemoCycle({ daemon, simulator, folders, sources: SOURCES });
      io.stdout.write(formatCycleReport(report));
    } else {
      const stops = [startFeed(handles, logger), startProgress(handles, io)];
      if (!io.stopSignal.aborted) await new Promise((resolve) => io.stopSignal.addEventListener('abort', resolve, { once: true }));
      stops.forEach((stop) => stop());
      io.stdout.write('stopping the demo...\n');
    }
    await options.hooks?.stopping?.(handles);
    return report;
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
