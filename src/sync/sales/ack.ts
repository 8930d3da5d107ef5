/**
 * The acknowledgement written on the store once the ERP has a sale (`sales.ack`): the ack status with
 * its text, and a note naming the ERP reference appended to the sale's observations, which may hold the
 * customer's own note. The note is appended once: a retried acknowledgement finds it there.
 */
import type { Config } from '../../config/schema.js';
import type { Sale, SaleUpdate } from '../../store/schemas/index.js';

/** Replaces `{name}` placeholders with `values`; unknown placeholders are left as written. */
export function renderTemplate(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (match, name: string) => (name in values ? String(values[name]) : match));
}

/** The note the acknowledgement adds to the observations. */
export function ackNote(ack: Config['sales']['ack'], saleId: number, siteId: number, erpRef: string): string {
  return renderTemplate(ack.observations, { erpRef, saleId, siteId });
}

/**
 * `observations` with `note` on a line of its own after what is there, or undefined when a line of it
 * already is the note (a line, not a substring: "ERP order 1-5" is not in "ERP order 1-55").
 */
export function appendOnce(observations: string | null | undefined, note: string): string | undefined {
  const current = observations ?? '';
  if (current.split(/\r?\n/).some((line) => line.trim() === note.trim())) return undefined;
  return current.trim() === '' ? note : `${current.trimEnd()}\n${note}`;
}

/** What the acknowledgement needs to know about the sale's place in the flow. */
export interface AckContext {
  saleId: number;
  siteId: number;
  erpRef: string;
  /** Statuses the pull reads (`sales.pull.statuses`): a sale still in one of them has not moved on. */
  pulledStatuses: readonly number[];
}

/**
 * The change that acknowledges `sale` as the store holds it now: the ack status (with its configured
 * text, if any) unless the sale already has it or has moved on to another status (a shipment, an
 * operator), and the note appended to the observations unless already there. Empty: already acknowledged.
 */
export function ackChange(ack: Config['sales']['ack'], sale: Sale, context: AckContext): SaleUpdate {
  const change: SaleUpdate = {};
  const status = sale.Status;
  const movedOn = typeof status === 'number' && !context.pulledStatuses.includes(status) && status !== ack.status;
  if (!movedOn && status !== ack.status) {
    change.Status = ack.status;
    if (ack.statusText !== undefined) change.StatusText = ack.statusText;
  }
  const observations = appendOnce(sale.Obeservations, ackNote(ack, context.saleId, context.siteId, context.erpRef));
  if (observations !== undefined) change.Obeservations = observations;
  return change;
}
