/** The fulfilment flow: ERP shipment updates → store sales, through the transition guard. */
export { type FulfilmentFlow, startFulfilmentFlow, updateSale } from './flow.js';
export { type GuardSettings, planUpdate } from './guard.js';
export type { FulfilmentEvents, FulfilmentJobData, FulfilmentPollReport, FulfilmentResult, FulfilmentUpdate } from './types.js';
