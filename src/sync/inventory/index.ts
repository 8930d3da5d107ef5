/** The inventory flow: ERP stock and prices → store, a batch of SKUs per job. */
export type { PollOptions } from '../poll-source.js';
export { explainSku, type SkuExplanation } from './explain.js';
export { type InventoryFlow, startInventoryFlow } from './flow.js';
export { pollSource } from './producer.js';
export { type ReconcileOptions, reconcileWith, runReconcile } from './reconcile.js';
export { markSalesProcessed, type ProcessedOutcome } from './reservation-sync.js';
export { type InventoryRuntime, openInventoryRuntime } from './runtime.js';
export type * from './types.js';
export { type ConfirmReport, confirmVanished, type HeldPage, heldPage, type HeldPageOptions, keepVanished } from './vanished.js';
export { createInventoryWorker } from './worker.js';
