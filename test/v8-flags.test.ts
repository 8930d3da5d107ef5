import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { memorySettingsFor, YOUNG_GENERATION_CAP_MB } from '../src/v8-flags.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * A child process that sets the flags as the entry does, allocates 200 MB of objects (some of them living
 * through a few collections, as a request in flight does), and prints the largest size of V8's young
 * generation it saw, in MB (both semi-spaces): the cap acts at run time.
 */
async function youngGenerationAfterLoad(nodeArgs: string[]): Promise<number> {
  const script = `
    const v8 = await import('node:v8');
    const { applyMemoryFlags } = await import('./dist/src/v8-flags.js');
    applyMemoryFlags(process.execArgv.join(' '));
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    let keep = [];
    let largest = 0;
    for (let round = 0; round < 100; round++) {
      for (let i = 0; i < 20000; i++) keep.push({ a: i, b: 'x' + i });
      if (keep.length > 100000) keep = [];
      // The observer that caps the young generation runs between tasks, as in the daemon.
      await new Promise((resolve) => setImmediate(resolve));
      largest = Math.max(largest, young());
    }
    console.log(largest);
  `;
  const { stdout } = await run(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { cwd: root });
  return Number(stdout.trim());
}

describe('the V8 memory flags', () => {
  it('are both set unless node was given a setting of the same kind', () => {
    expect(memorySettingsFor('')).toEqual({ flags: ['--heap-growing-percent=25'], capYoungGeneration: true });
    expect(memorySettingsFor('--heap-growing-percent=0 --cpu-prof')).toEqual({ flags: [], capYoungGeneration: true });
    expect(memorySettingsFor('--semi_space_growth_factor=2')).toEqual({ flags: ['--heap-growing-percent=25'], capYoungGeneration: false });
    expect(memorySettingsFor(' --max-semi-space-size=16')).toEqual({ flags: ['--heap-growing-percent=25'], capYoungGeneration: false });
  });

  it('let the young generation grow under load up to the cap (one growth past it at most), and a semi-space flag given to node gives V8 its own growth back', async () => {
    const capped = await youngGenerationAfterLoad([]);
    const own = await youngGenerationAfterLoad(['--max-semi-space-size=16']);
    // Grown past its first size (1 MB here) and stopped at the cap, or one growth past it: the observer
    // learns of a collection after it ended, so a second collection before the observer runs still grows
    // with V8's factor (seen in CI under the suite's load: 16 MB). V8's own growth, without the cap,
    // reaches 2 × 16 MB here, so a cap that does not act still fails.
    expect(capped).toBeGreaterThan(2);
    expect(capped).toBeLessThanOrEqual(2 * YOUNG_GENERATION_CAP_MB);
    expect(own).toBeGreaterThan(2 * YOUNG_GENERATION_CAP_MB);
  });
});
