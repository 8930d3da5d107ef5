/**
 * A source's full current set and what it says by what it lacks: the ERP side held in columns
 * (`erp-snapshot.ts`, read by the reconcile too), the snapshot's rows as pending entries
 * (`snapshot-entries.ts`), the snapshot diff against the previous complete set (`snapshot-diff.ts`,
 * `diff-state.ts`, run on schedule by `diff-runs.ts`), and the SKUs it no longer has or the deletions query
 * names (`vanished.ts`, `deletions.ts`), held by the mass guard (`mass-guard.ts`) when they are too many.
 */
export { collectHeld, deletionsOf, diffOnce, diffRuns, runDiff } from './diff-runs.js';
export { DiffState } from './diff-state.js';
export { ErpSnapshot, refusedRows } from './erp-snapshot.js';
export { exceedsMassGuard } from './mass-guard.js';
export { snapshotEntries, targetRows } from './snapshot-entries.js';
export { type ConfirmReport, confirmVanished, heldOf } from './vanished.js';
