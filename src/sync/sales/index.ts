/** The sales flow: store sales → ERP exactly once, acknowledged on the store. */
export { exportOneSale, type ExportOneSaleOptions, type SalesFlow, type SalesFlowOptions, startSalesFlow } from './flow.js';
export { type PullOptions, pullSales } from './pull.js';
export type { PullReport, SaleOutcome, SalesEvents, SalesJobData } from './types.js';
