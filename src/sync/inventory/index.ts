/** The inventory flow: ERP stock and prices → store, a batch of SKUs per job. */
export type { PollOptions } from '../poll-source.js';
export { explainSku, type SkuExplanation } from './explain.js';
export { type InventoryFlow, startInventoryFlow } from './flow.js';
export { markSalesProcessed, type ProcessedOutcome } from './listing/index.js';
export { pollSource } from './producer.js';
export { type ReconcileOptions, reconcileWith, runReconcile } from './reconcile/index.js';
export { type InventoryRuntime, openInventoryRuntime } from './runtime.js';
export { type ConfirmReport,confirmVanished } from './snapshot/index.js';
export type * from './types.js';
export { createInventoryWorker } from './worker.js';
