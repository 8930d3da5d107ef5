/**
 * The memory settings storesync gives V8 for itself, measured (bench/README.md, "Memory"). V8 lets a
 * fast-allocating process's old generation grow to several times what is live before a full
 * collection (a sync of 100,000 SKUs: about 65 MB live, up to 290 MB committed, 370 MiB RSS), and grows
 * the young generation to 2 × 16 MB, which an idle daemon then keeps. A heap growing factor of 1.25 and a
 * young generation capped at 2 × 4 MB keep the daemon near its live set (a 100,000-SKU sync under 200 MB
 * instead of 370, idle about 100–105 MiB instead of 135–145). The cap, not a young generation kept at its
 * first size (1 MB for both semi-spaces): there the objects of a store request in flight (20 ms) outlive
 * a scavenge or two and are promoted, and garbage collection took 32–38 % of the busy main thread; the cap cuts the CPU per
 * synced SKU by about a quarter at 20 ms and concurrency 32 for about 8 MiB more while syncing. That
 * young generation is grown only while the process is busy, after its start-up (`capYoungGeneration`):
 * an idle daemon keeps V8's first 2 MB (Node 20; Node 24's V8 resizes it by itself, 3–9 MB). Set before the modules load (the process entry), they cover the
 * whole run. Measured on Node 20 (V8 11.3).
 */
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/** The young generation's cap: both semi-spaces, MB (V8 doubles it from its first size, 1 MB: 1 → 2 → 4 → 8). */
export const YOUNG_GENERATION_CAP_MB = 8;

const HEAP_GROWING = [/heap[-_]growing[-_]percent/, '--heap-growing-percent=25'] as const;
/** Any semi-space flag the user gave (a size or a growth factor) leaves the young generation to V8. */
const SEMI_SPACE = /semi[-_]space/;

/** What `applyMemoryFlags` sets when node was given `given`: each setting whose kind `given` does not name. */
export function memorySettingsFor(given: string): { flags: string[]; capYoungGeneration: boolean } {
  return {
    flags: HEAP_GROWING[0].test(given) ? [] : [HEAP_GROWING[1]],
    capYoungGeneration: !SEMI_SPACE.test(given),
  };
}

/**
 * Sets the memory settings, except those of a kind the user gave to node (`given`: `process.execArgv` and
 * `NODE_OPTIONS`; `node --heap-growing-percent=0 --max-semi-space-size=16 bin/storesync.js run` gives V8's
 * behaviour back). Node refuses the growing flag in NODE_OPTIONS, so the command line is its only place.
 */
export function applyMemoryFlags(given: string): void {
  const settings = memorySettingsFor(given);
  for (const flag of settings.flags) v8.setFlagsFromString(flag);
  if (settings.capYoungGeneration) capYoungGeneration(YOUNG_GENERATION_CAP_MB);
}

function youngGenerationMb(): number {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return (space?.space_size ?? 0) / 1_048_576;
}

/**
 * Scavenges (young-generation collections) within one second that let the young generation grow. A sync
 * makes hundreds a second; an idle daemon's polls a few, and yet they would grow it to the cap over its
 * first minute (V8 grows it as objects survive scavenges, however slowly): 8 MB committed for nothing,
 * about 6 MiB of the idle RSS (issue 27).
 */
export const BUSY_SCAVENGES_PER_S = 10;

/** Until `startedUp()`, the young generation does not grow: loading the modules and starting the flows are no sync. */
let startingUp = true;

/**
 * Ends the start-up: from now on the young generation grows while the process is busy. The daemon calls it
 * once started (daemon.ts), the command line for every other command before it runs (cli/program.ts).
 */
export function startedUp(): void {
  startingUp = false;
}

/** Whether the process is still starting up (`startedUp` not called yet). */
export function isStartingUp(): boolean {
  return startingUp;
}

/**
 * Caps the young generation at `capMb` (both semi-spaces), and lets it grow only while the process is
 * busy, after its start-up. Its maximum size can be set only on node's command line (`--max-semi-space-size`, read when the
 * heap is made), but V8 reads the growth factor each time it grows the young generation: after every
 * collection the factor becomes 2 (V8's own) once the process started up, while the young generation is
 * below the cap and the last BUSY_SCAVENGES_PER_S scavenges fell within a second, and 1 (no growth)
 * otherwise; it is 1 from the start. So it grows under load up to the cap, and grows again after V8 has
 * shrunk it when the process went quiet, but an idle process keeps V8's first size. A collection is
 * observed after it ends, so one growth past the cap can slip through before the factor is 1 (a second
 * collection before the observer ran: 16 MB instead of 8, seen once in CI under the suite's load); the
 * next observation stops any more. Returns the function that stops the cap.
 */
export function capYoungGeneration(capMb: number): () => void {
  let growing = false;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  // When the last BUSY_SCAVENGES_PER_S scavenges ended (ms, performance's clock), oldest first.
  const scavenges: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MINOR) continue;
      scavenges.push(entry.startTime + entry.duration);
      if (scavenges.length > BUSY_SCAVENGES_PER_S) scavenges.shift();
    }
    const busy = scavenges.length === BUSY_SCAVENGES_PER_S && performance.now() - scavenges[0]! <= 1000;
    const grow = !startingUp && busy && youngGenerationMb() < capMb;
    if (grow === growing) return;
    growing = grow;
    v8.setFlagsFromString(`--semi-space-growth-factor=${growing ? 2 : 1}`);
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
