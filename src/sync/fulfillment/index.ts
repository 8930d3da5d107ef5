/** The fulfillment flow: ERP shipment updates → store sales, through the transition guard. */
export { type FulfillmentFlow, startFulfillmentFlow, updateSale } from './flow.js';
export { type GuardSettings, planUpdate } from './guard.js';
export type { FulfillmentEvents, FulfillmentJobData, FulfillmentPollReport, FulfillmentResult, FulfillmentUpdate } from './types.js';
