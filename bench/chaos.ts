/**
 * `npm run chaos [-- --quick] [-- --seed N] [-- --keep-logs] [-- --ha] [-- --targets] [-- --kits]`: the chaos run (see
 * lib/chaos/run.ts; `--ha`: Sentinel, with a primary kill and a failover to a lagging replica,
 * lib/chaos/chaos-redis.ts; `--targets`: two sites and two price lists, lib/chaos/targets.ts; `--kits`: kits sold
 * alongside their components, lib/chaos/kits.ts).
 * Prints one line per check and a final `N passed, N failed`; exits non-zero when any check fails.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { PLANS, runChaos } from './lib/chaos/run.js';
import { Cleanup } from './lib/cleanup.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seed: { type: 'string' },
    'keep-logs': { type: 'boolean', default: false },
    ha: { type: 'boolean', default: false },
    targets: { type: 'boolean', default: false },
    kits: { type: 'boolean', default: false },
  },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 1_000_000) : Number(values.seed);
if (!Number.isInteger(seed)) {
  console.error(`--seed must be a whole number, got ${values.seed}`);
  process.exit(2);
}
const plan = PLANS[values.quick ? 'quick' : 'full'];
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const cleanup = new Cleanup();
cleanup.exitOnSignals(log);
// The whole run is bounded: disorder, drain, checks and cleanup.
const limitS = plan.durationS + plan.drainTimeoutS + 120;
setTimeout(() => {
  log(`time limit of ${limitS} s reached: cleaning up`);
  void cleanup.run(log).then(() => process.exit(1));
}, limitS * 1000).unref();

let failed = 0;
let passed = 0;
try {
  const flags = `${values.ha ? ' --ha' : ''}${values.targets ? ' --targets' : ''}${values.kits ? ' --kits' : ''}`;
  log(`chaos ${values.quick ? 'quick' : 'full'}${flags} run: ${plan.durationS} s of disorder, ${plan.skus} SKUs, ${plan.workers} workers`);
  const report = await runChaos({ plan, seed, root, log, keepLogs: values['keep-logs'] ?? false, ha: values.ha ?? false, targets: values.targets ?? false, kits: values.kits ?? false }, cleanup);
  const { events: _events, ...stats } = report.stats;
  log(`stats: ${JSON.stringify(stats)}`);
  for (const check of report.checks) {
    if (check.ok) passed += 1;
    else failed += 1;
    log(`${check.ok ? 'PASS' : 'FAIL'} ${check.name}: ${check.detail}`);
  }
} catch (error) {
  failed += 1;
  log(`FAIL chaos run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await cleanup.run(log);
}
log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
