import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CheckResult } from '../../bench/lib/chaos/checks.js';
import { type ChaosReport, PLANS, runChaos } from '../../bench/lib/chaos/run.js';
import { Cleanup } from '../../bench/lib/cleanup.js';
import { BUILD_TIMEOUT_MS, freshBuild } from '../support/fresh-build.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cleanup = new Cleanup();
afterAll(() => cleanup.run());

/**
 * Seeds that once failed (the seed fixes the random choices, not the timing): 7, a reservations race;
 * 855600, a worker killed 2 s before the disorder ended, whose job the check looked at after the fleet
 * had stopped (the recovery windows now close while the daemons run).
 */
const SEEDS = [7, 855600];

/**
 * `--targets` (two sites, two price lists; bench/lib/chaos/targets.ts): one seed, whose allocation is
 * `split` 0.6/0.4 (the seed picks it), the mode with the sites' sum to keep under the ERP's stock.
 */
const TARGETS_SEED = 239290;

/** `--kits` (kits sold alongside their components; bench/lib/chaos/kits.ts): one seed. */
const KITS_SEED = 7;

describe('chaos (quick)', () => {
  // The daemons run as `node bin/storesync.js run`, that is dist/.
  beforeAll(() => freshBuild(), BUILD_TIMEOUT_MS);

  it.each(SEEDS)(
    'loses no change, writes nothing stale or invalid and exports and acknowledges each sale once while workers, Redis and the ERP die (seed %i)',
    async (seed) => {
      const report = await passingRun(seed);
      expect(report.checks.length).toBeGreaterThanOrEqual(9);
    },
    240_000,
  );

  it(
    `with two sites and two price lists, ends each site at its figure of the allocation and each list at its ERP price, nothing stale per target (seed ${TARGETS_SEED})`,
    async () => {
      const report = await passingRun(TARGETS_SEED, { targets: true });
      expect(report.checks.map((check) => check.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^targets \(split\)/), expect.stringMatching(/^price lists:/)]));
    },
    240_000,
  );

  it(
    `with kits sold alongside their components, ends every kit at its figure and writes none over what its components can deliver (seed ${KITS_SEED})`,
    async () => {
      const report = await passingRun(KITS_SEED, { kits: true });
      expect(report.checks.map((check) => check.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^kits: every change-log SKU/), expect.stringMatching(/^kits: no kit write over/)]));
    },
    240_000,
  );
});

/** Runs the quick plan and expects every check to pass, printing the failed ones and the run's lines when not. */
async function passingRun(seed: number, variant: { targets?: boolean; kits?: boolean } = {}): Promise<ChaosReport> {
  const lines: string[] = [];
  const report = await runChaos({ plan: PLANS.quick, seed, root, log: (line) => lines.push(line), ...variant }, cleanup);
  const failed = report.checks.filter((check) => !check.ok);
  const describe = (checks: readonly CheckResult[]): string => checks.map((c) => `${c.name}: ${c.detail}`).join('\n');
  expect(failed, `failed checks:\n${describe(failed)}\n\nrun:\n${lines.join('\n')}`).toEqual([]);
  return report;
}
