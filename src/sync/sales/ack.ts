/**
 * The acknowledgement written on the store once the ERP has a sale: a status, its text and an
 * observation naming the ERP reference (`sales.ack`).
 */
import type { Config } from '../../config/schema.js';
import type { SaleUpdate } from '../../store/schemas/index.js';

/** Replaces `{name}` placeholders with `values`; unknown placeholders are left as written. */
export function renderTemplate(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (match, name: string) => (name in values ? String(values[name]) : match));
}

/** The `PUT /Api/Sale/{id}` body acknowledging an exported sale. */
export function ackPayload(ack: Config['sales']['ack'], saleId: number, siteId: number, erpRef: string): SaleUpdate {
  return {
    Id: saleId,
    Status: ack.status,
    StatusText: ack.statusText,
    Obeservations: renderTemplate(ack.observations, { erpRef, saleId, siteId }),
  };
}
