/**
 * The reconcile: the ERP's full current set against the store's inventory, field by field, and only the
 * differences queued (`reconcile.ts` runs it; the `reconcile-*` files are its steps, `compare.ts` how two
 * values are found the same).
 */
export { type ReconcileOptions, reconcileWith, runReconcile } from './reconcile.js';
