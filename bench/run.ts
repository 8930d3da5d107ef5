/**
 * `npm run bench [-- --quick] [-- --baseline COMMIT] [-- --only cli,memory,throughput,reconcile,coalescing,latency,stockout,reconcile-large,diff,targets,kits,scale] [-- --latencies 20,0 --concurrencies 16 --items 3000] [-- --profile DIR] [-- --node-args="FLAGS"]`: the benchmarks,
 * against the simulator on loopback, with a redis-server and a PostgreSQL cluster of their own. Each
 * figure is stored beside a baseline measured in the same run (the machine is shared and noisy), in
 * bench/results/<name>.json, and a full run rewrites the table in bench/README.md.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { buildBaseline } from './lib/baseline-build.js';
import { Cleanup } from './lib/cleanup.js';
import { cliBench } from './lib/cli-bench.js';
import { cliMemoryBench } from './lib/cli-memory.js';
import { coalescingBench } from './lib/coalescing.js';
import { diffBench } from './lib/diff-bench.js';
import { startEnvironment } from './lib/environment.js';
import { kitsBench } from './lib/kits-bench.js';
import { latencyBench } from './lib/latency.js';
import { largeReconcileBench, reconcileBench } from './lib/reconcile-bench.js';
import { type BenchResult, runInfo, updateReadme, writeResult } from './lib/results.js';
import { scaleBench } from './lib/scale-bench.js';
import { stockoutBench } from './lib/stockout.js';
import { targetsBench } from './lib/targets-bench.js';
import { throughputBench } from './lib/throughput.js';

const BENCHES = ['cli', 'memory', 'throughput', 'reconcile', 'coalescing', 'latency', 'stockout', 'reconcile-large', 'diff', 'targets', 'kits', 'scale'] as const;
type BenchName = (typeof BENCHES)[number];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    // Writes a V8 CPU profile of every daemon process into this folder (open it in Chrome DevTools).
    profile: { type: 'string' },
    // More arguments for node in every daemon process, e.g. V8 flags to compare: --node-args="--heap-growing-percent=0" (with "=").
    'node-args': { type: 'string' },
    // The grid of the cli benchmark, to re-measure a few cells: comma-separated numbers.
    latencies: { type: 'string' },
    concurrencies: { type: 'string' },
    // Items of every cli cell (instead of sizing each cell to a few seconds of the raw loop).
    items: { type: 'string' },
    // A/B of the cli cells against a build of this commit (built in a temporary git worktree, removed after).
    baseline: { type: 'string' },
    // Also measure every cli cell with the floor process: the least work per item on this stack (bench/lib/floor-child.ts).
    floor: { type: 'boolean', default: false },
  },
});
const quick = values.quick ?? false;
const only = (values.only?.split(',').map((s) => s.trim()) ?? [...BENCHES]) as BenchName[];
const unknown = only.filter((name) => !BENCHES.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; choose from ${BENCHES.join(', ')}`);
  process.exit(2);
}

// dist/bench/run.js → the package root is two folders up; the sources' bench/ folder holds results.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const benchDir = join(root, 'bench');
const resultsDir = join(benchDir, 'results');
const command = `npm run bench --${quick ? ' --quick' : ''}${values.only ? ` --only ${values.only}` : ''}${values['node-args'] ? ` --node-args="${values['node-args']}"` : ''}${values.baseline ? ` --baseline ${values.baseline}` : ''}${values.floor ? ' --floor' : ''}`.replace(/ --$/, '');
const log = (line: string): void => {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};

const cleanup = new Cleanup();
cleanup.exitOnSignals(log);

// Every run is bounded: past this the run stops, cleans up and fails.
const deadline = setTimeout(() => {
  log('time limit reached: cleaning up');
  void cleanup.run(log).then(() => process.exit(1));
}, (quick ? 8 : 25) * 60_000);
deadline.unref();

const started = Date.now();
let failed = false;
try {
  const storeItems = only.includes('reconcile') ? (quick ? 10_000 : 100_000) : 20_000;
  const nodeArgs = values['node-args']?.split(/\s+/).filter((arg) => arg !== '') ?? [];
  const env = await startEnvironment(root, storeItems, cleanup, log, values.profile, nodeArgs);
  const baseline = values.baseline && only.includes('cli') ? await buildBaseline(root, values.baseline, cleanup, log) : undefined;
  const info = runInfo(command, quick);
  const record = (result: Omit<BenchResult, 'run'>): void => {
    const file = writeResult(resultsDir, { ...result, run: info });
    log(`${result.name}: written to ${file}`);
    for (const row of result.summary) log(`  ${row.measure}: ${row.value} | baseline ${row.baseline} | ${row.verdict}`);
  };
  if (only.includes('cli')) {
    const grid = quick
      ? { latencies: [20, 0], concurrencies: [16], targetS: 1, minItems: 300, maxItems: 1000, scaleOutItems: 0, idleS: 5, warmUpItems: 1000 }
      : { latencies: [20, 5, 0], concurrencies: [1, 8, 16, 32], targetS: 3, minItems: 200, maxItems: 3000, scaleOutItems: 6000, idleS: 20, warmUpItems: 3000 };
    const numbers = (text: string | undefined) => text?.split(',').map(Number);
    record(
      await cliBench(
        env,
        {
          ...grid,
          latencies: numbers(values.latencies) ?? grid.latencies,
          concurrencies: numbers(values.concurrencies) ?? grid.concurrencies,
          ...(values.items ? { minItems: Number(values.items), maxItems: Number(values.items) } : {}),
          floor: values.floor ?? false,
        },
        log,
        baseline,
      ),
    );
  }
  if (only.includes('memory')) record(await cliMemoryBench(env, { skus: 100_000, idleS: quick ? 5 : 20, timeoutS: 600 }, log));
  if (only.includes('throughput')) {
    record(
      await throughputBench(
        env,
        quick
          ? { latencies: [0, 20], concurrencies: [1, 8], targetS: 0.5, maxItems: 1000, reps: 1 }
          : { latencies: [0, 5, 20], concurrencies: [1, 8, 32], targetS: 2, maxItems: 5000, reps: 2 },
        log,
      ),
    );
  }
  if (only.includes('reconcile')) record(await reconcileBench(env, { skus: storeItems, differentShare: 0.01 }, log));
  if (only.includes('coalescing')) record(await coalescingBench(env, quick ? { skus: 1000, updatesPerSku: 10 } : { skus: 10_000, updatesPerSku: 10 }, log));
  if (only.includes('latency')) record(await latencyBench(env, quick ? { perSecond: 50, seconds: 5 } : { perSecond: 200, seconds: 30 }, log));
  if (only.includes('stockout')) record(await stockoutBench(env, quick ? { backlog: 2000, stockouts: 10, idleStockouts: 5 } : { backlog: 10_000, stockouts: 40, idleStockouts: 20 }, log));
  if (only.includes('reconcile-large')) record(await largeReconcileBench(env, { skus: quick ? 200_000 : 1_000_000, differentShare: 0.001 }, log));
  if (only.includes('diff')) record(await diffBench(env, { skus: quick ? 10_000 : 100_000, changedShare: 0.01 }, log));
  if (only.includes('scale')) record(await scaleBench(env, { skus: quick ? 100_000 : 1_000_000, changedShare: 0.01, driftShare: 0.001, idleS: quick ? 5 : 20 }, log));
  if (only.includes('targets')) {
    // The cli benchmark's main cell (20 ms, concurrency 16: 2,319 items there); 9 targets per Code.
    const size = quick ? { codes: 100, warmUpWrites: 1000, rounds: 1 } : { codes: 300, warmUpWrites: 3000, rounds: 2 };
    record(await targetsBench(env, { ...size, latencyMs: 20, concurrency: 16 }, log));
  }
  if (only.includes('kits')) record(await kitsBench(env, { changes: quick ? 500 : 2000, concurrency: 16 }, log));
  if (!quick) updateReadme(join(benchDir, 'README.md'), resultsDir, BENCHES);
} catch (error) {
  failed = true;
  log(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await cleanup.run(log);
  log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
}
process.exit(failed ? 1 : 0);
