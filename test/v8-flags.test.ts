import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { beforeAll, describe, expect, it } from 'vitest';

import { memorySettingsFor, YOUNG_GENERATION_CAP_MB } from '../src/v8-flags.js';
import { BUILD_TIMEOUT_MS, freshBuild } from './support/fresh-build.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/** What a child process under load saw of the young generation and of the flags the entry's settings gave V8. */
interface Load {
  /** The young generation's largest size (both semi-spaces, MB). */
  largest: number;
  /** After each batch of collections the cap observed: the size it read (MB) and the growth factor then in force. */
  decisions: Array<[number, number]>;
  /** Every flag set at run time, in order. */
  flags: string[];
}

/**
 * A child process that sets the flags as the entry does (from dist/, built fresh), allocates 200 MB of objects (some
 * of them living through a few collections, as a request in flight does), and reports what it saw. V8's own
 * `setFlagsFromString` and `getHeapSpaceStatistics` are wrapped, so each decision is checked against the very size
 * the cap read: an observer registered after the cap's is called right after it for the same collections, when the
 * young generation may already have grown again (the cap's tolerated overshoot), but the cap's reading is known.
 */
async function youngGenerationUnderLoad(nodeArgs: string[], pace: { rounds: number; objects: number; pauseMs: number; ring?: number } = { rounds: 100, objects: 20_000, pauseMs: 0 }, startedUp = true): Promise<Load> {
  const script = `
    const v8 = (await import('node:v8')).default;
    const { PerformanceObserver } = await import('node:perf_hooks');
    const youngMb = (stats) => stats.find((s) => s.space_name === 'new_space').space_size / 1048576;
    const { getHeapSpaceStatistics, setFlagsFromString } = v8;
    let read = 0;
    let factor = 2;
    const flags = [];
    v8.getHeapSpaceStatistics = () => {
      const stats = getHeapSpaceStatistics();
      read = youngMb(stats);
      return stats;
    };
    v8.setFlagsFromString = (flag) => {
      flags.push(flag);
      const growth = /growth-factor=(\\d+)$/.exec(flag);
      if (growth) factor = Number(growth[1]);
      setFlagsFromString(flag);
    };
    const { applyMemoryFlags, startedUp } = await import('./dist/src/v8-flags.js');
    // node's options, without this script (in execArgv after -e), whose text names the flags it watches.
    applyMemoryFlags(process.execArgv.filter((arg) => arg.startsWith('-')).join(' '));
    if (${startedUp}) startedUp();
    const decisions = [];
    new PerformanceObserver(() => decisions.push([read, factor])).observe({ entryTypes: ['gc'] });
    let keep = [];
    // pace.ring: each object overwritten in a ring of that many, living through a scavenge or two and rarely promoted.
    const ring = ${pace.ring ?? 0} > 0 ? new Array(${pace.ring ?? 0}) : undefined;
    let written = 0;
    let largest = 0;
    for (let round = 0; round < ${pace.rounds}; round++) {
      for (let i = 0; i < ${pace.objects}; i++) {
        if (ring) ring[written++ % ring.length] = { a: i, b: 'x' + i };
        else keep.push({ a: i, b: 'x' + i });
      }
      if (keep.length > 100000) keep = [];
      // The observer that caps the young generation runs between tasks, as in the daemon.
      await new Promise((resolve) => setTimeout(resolve, ${pace.pauseMs}));
      largest = Math.max(largest, youngMb(getHeapSpaceStatistics()));
    }
    console.log(JSON.stringify({ largest, decisions, flags }));
  `;
  const { stdout } = await run(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { cwd: root });
  return JSON.parse(stdout) as Load;
}

describe('the V8 memory flags', () => {
  // The child runs dist/: a build older than the sources would test old code.
  beforeAll(() => freshBuild(), BUILD_TIMEOUT_MS);

  it('are both set unless node was given a setting of the same kind', () => {
    expect(memorySettingsFor('')).toEqual({ flags: ['--heap-growing-percent=25'], capYoungGeneration: true });
    expect(memorySettingsFor('--heap-growing-percent=0 --cpu-prof')).toEqual({ flags: [], capYoungGeneration: true });
    expect(memorySettingsFor('--semi_space_growth_factor=2')).toEqual({ flags: ['--heap-growing-percent=25'], capYoungGeneration: false });
    expect(memorySettingsFor(' --max-semi-space-size=16')).toEqual({ flags: ['--heap-growing-percent=25'], capYoungGeneration: false });
  });

  it('let the young generation grow under load up to the cap, and stop it growing once the cap observed it there', async () => {
    const { decisions, largest, flags } = await youngGenerationUnderLoad([]);
    // No growth until the process is seen busy (the modules' load is no sync).
    expect(flags.slice(0, 2)).toEqual(['--heap-growing-percent=25', '--semi-space-growth-factor=1']);
    // The cap saw the young generation reach it: it grew under load (and the check below is not vacuous)...
    expect(Math.max(...decisions.map(([mb]) => mb))).toBeGreaterThanOrEqual(YOUNG_GENERATION_CAP_MB);
    // ...and after every observation at or past the cap, the growth factor was 1.
    const wrong = decisions.filter(([mb, factor]) => mb >= YOUNG_GENERATION_CAP_MB && factor !== 1);
    expect(wrong, `[young generation read by the cap (MB), growth factor] against a cap of ${YOUNG_GENERATION_CAP_MB} MB`).toEqual([]);
    // A collection is observed after it ended, so one growth past the cap can slip through (capYoungGeneration).
    expect(largest).toBeLessThanOrEqual(2 * YOUNG_GENERATION_CAP_MB);
  });

  it('let the young generation grow under a load of scavenges alone, with next to no major collection', async () => {
    // Objects overwritten in a ring of 5,000: hundreds of scavenges, a major collection at most (seen: 0 or 1). Busy
    // is counted in scavenges: the young generation grows to the cap all the same.
    const { decisions, largest } = await youngGenerationUnderLoad([], { rounds: 100, objects: 20_000, pauseMs: 0, ring: 5000 });
    expect(decisions.length, 'collections observed').toBeGreaterThan(20);
    expect(Math.max(...decisions.map(([mb]) => mb))).toBeGreaterThanOrEqual(YOUNG_GENERATION_CAP_MB);
    expect(largest).toBeLessThanOrEqual(2 * YOUNG_GENERATION_CAP_MB);
  });

  it('keep the young generation at its first size while the process starts up, however busy', async () => {
    const { largest, decisions } = await youngGenerationUnderLoad([], undefined, false);
    expect(decisions.length, 'collections observed').toBeGreaterThan(10);
    // What storesync decides: no growth (a factor of 1) after any collection of the start-up.
    expect(decisions.filter(([, factor]) => factor !== 1), '[young generation (MB), growth factor] during the start-up').toEqual([]);
    // What V8 makes of it. Node 20's V8 (11.3) keeps the young generation at its first size, both semi-spaces in
    // use: twice what it reads before any collection (1 → 2 MB), where it reaches the cap within these
    // collections once it may grow (the tests above). Node 24's V8 (13.6) resizes it by itself whatever the
    // factor: 3.25–6.5 MB in runs here, once 9.25 MB in a CI run under load, past the cap; there only the bound
    // of the cap's own tests holds.
    const v8Major = Number(process.versions.v8.split('.')[0]);
    if (v8Major <= 11) expect(largest).toBeLessThanOrEqual(2);
    else expect(largest).toBeLessThanOrEqual(2 * YOUNG_GENERATION_CAP_MB);
  });

  it("keep an idle process's young generation at its first size", async () => {
    // 2,000 small objects every 50 ms for 4 s, some of them kept through a few collections: a few scavenges
    // a second, as a daemon polling its sources makes; V8 alone grows the young generation under this.
    const { largest, decisions } = await youngGenerationUnderLoad([], { rounds: 80, objects: 2000, pauseMs: 50 });
    expect(decisions.length, 'collections observed').toBeGreaterThan(3);
    // Below the cap (V8 alone grows it to the cap here): on Node 20 at its first size, 2 MB (see the test above).
    expect(largest).toBeLessThan(YOUNG_GENERATION_CAP_MB);
  });

  it('leave the young generation to V8 when node was given a semi-space flag', async () => {
    const { largest, flags } = await youngGenerationUnderLoad(['--max-semi-space-size=16']);
    expect(flags).toEqual(['--heap-growing-percent=25']);
    expect(largest).toBeGreaterThan(2 * YOUNG_GENERATION_CAP_MB);
  });
});
