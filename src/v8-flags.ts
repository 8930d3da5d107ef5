/**
 * The V8 flags storesync sets for itself, measured (bench/README.md, "Memory"). V8 lets a
 * fast-allocating process's old generation grow to several times what is live before a full
 * collection (a sync of 100,000 SKUs: about 65 MB live, up to 290 MB committed, 370 MiB RSS), and grows
 * the young generation to 2 × 16 MB, which an idle daemon then keeps. A growing factor of 1.25 and a
 * young generation that stays at its first size keep the daemon near its live set (idle about 105 MiB
 * instead of 135–145, a 100,000-SKU sync under 200 MB instead of 370) for about 0.15 ms more CPU per
 * synced SKU. Set before the modules load (the process entry), they cover the whole run. Measured on
 * Node 20 (V8 11.3); some newer V8 versions raise a young-generation growth factor below 2 to 2, and
 * there only the first flag acts.
 */
import v8 from 'node:v8';

/** Each flag, and the pattern that finds a flag of the same kind given by the user. */
const MEMORY_FLAGS: ReadonlyArray<readonly [RegExp, string]> = [
  [/heap[-_]growing[-_]percent/, '--heap-growing-percent=25'],
  [/semi[-_]space/, '--semi-space-growth-factor=1'],
];

/** The flags `applyMemoryFlags` sets: each one whose kind `given` (node's own arguments) does not name. */
export function memoryFlagsFor(given: string): string[] {
  return MEMORY_FLAGS.filter(([pattern]) => !pattern.test(given)).map(([, flag]) => flag);
}

/**
 * Sets the memory flags, except those of a kind the user gave on node's command line (`given`:
 * `process.execArgv`; `node --heap-growing-percent=0 --semi-space-growth-factor=2 bin/storesync.js run`
 * gives V8's behaviour back). Node refuses these V8 flags in NODE_OPTIONS, so the command line is the
 * only place for them.
 */
export function applyMemoryFlags(given: string): void {
  for (const flag of memoryFlagsFor(given)) v8.setFlagsFromString(flag);
}
