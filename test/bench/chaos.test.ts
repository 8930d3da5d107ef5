import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CheckResult } from '../../bench/lib/chaos/checks.js';
import { PLANS, runChaos } from '../../bench/lib/chaos/run.js';
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

describe('chaos (quick)', () => {
  // The daemons run as `node bin/storesync.js run`, that is dist/.
  beforeAll(() => freshBuild(), BUILD_TIMEOUT_MS);

  it.each(SEEDS)(
    'loses no change, writes nothing stale or invalid and exports and acknowledges each sale once while workers, Redis and the ERP die (seed %i)',
    async (seed) => {
      const lines: string[] = [];
      const report = await runChaos({ plan: PLANS.quick, seed, root, log: (line) => lines.push(line) }, cleanup);
      const failed = report.checks.filter((check) => !check.ok);
      const describe = (checks: readonly CheckResult[]): string => checks.map((c) => `${c.name}: ${c.detail}`).join('\n');
      expect(failed, `failed checks:\n${describe(failed)}\n\nrun:\n${lines.join('\n')}`).toEqual([]);
      expect(report.checks.length).toBeGreaterThanOrEqual(9);
    },
    240_000,
  );
});
