import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { memoryFlagsFor } from '../src/v8-flags.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * A child process that sets the flags as the entry does, allocates 200 MB of short-lived objects, and
 * prints the size of V8's young generation in MB (both semi-spaces): the growth factor acts at run time.
 */
async function youngGenerationAfterLoad(nodeArgs: string[]): Promise<number> {
  const script = `
    const v8 = await import('node:v8');
    const { applyMemoryFlags } = await import('./dist/src/v8-flags.js');
    applyMemoryFlags(process.execArgv.join(' '));
    let keep = [];
    for (let round = 0; round < 100; round++) {
      for (let i = 0; i < 20000; i++) keep.push({ a: i, b: 'x' + i });
      if (keep.length > 100000) keep = [];
    }
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    console.log(space.space_size / 1048576);
  `;
  const { stdout } = await run(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { cwd: root });
  return Number(stdout.trim());
}

describe('the V8 memory flags', () => {
  it('are both set unless node was given a flag of the same kind', () => {
    expect(memoryFlagsFor('')).toEqual(['--heap-growing-percent=25', '--semi-space-growth-factor=1']);
    expect(memoryFlagsFor('--heap-growing-percent=0 --cpu-prof')).toEqual(['--semi-space-growth-factor=1']);
    expect(memoryFlagsFor('--semi_space_growth_factor=2')).toEqual(['--heap-growing-percent=25']);
  });

  it('keep the young generation at its first size under load, and a flag on the command line gives V8 its own growth back', async () => {
    const kept = await youngGenerationAfterLoad([]);
    const grown = await youngGenerationAfterLoad(['--semi-space-growth-factor=2']);
    expect(kept).toBeLessThanOrEqual(2);
    expect(grown).toBeGreaterThan(kept);
  });
});
