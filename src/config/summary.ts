/**
 * One line saying what a configuration will run, for `storesync config check`: a reader sees at once
 * that sales sync is off, or that a source was left disabled.
 */
import type { Config, SourceConfig } from './schema.js';

function sources(list: readonly SourceConfig[]): string {
  const enabled = list.filter((source) => source.enabled);
  const disabled = list.length - enabled.length;
  const kinds = [...new Set(enabled.map((source) => source.kind))].join(', ');
  const count = enabled.length === 0 ? 'no sources' : `${enabled.length} source${enabled.length === 1 ? '' : 's'} (${kinds})`;
  return disabled > 0 ? `${count}, ${disabled} disabled` : count;
}

function sales(config: Readonly<Config>): string {
  const { sink, enabled, pull, ack } = config.sales;
  if (sink === null) return 'off — no sink configured';
  const pulled = enabled ? `pulled on "${pull.schedule}"` : 'no scheduled pull';
  const acknowledged = ack.enabled ? `acknowledged as status ${ack.status}` : 'not acknowledged';
  return `${sink.kind} sink, ${pulled}, ${acknowledged}`;
}

/** `inventory: 2 sources (sql, csv); sales: off — no sink configured; fulfillment: 1 source (csv)`. */
export function summarizeConfig(config: Readonly<Config>): string {
  const reconcile = config.inventory.reconcile.schedule;
  return [
    `inventory: ${sources(config.inventory.sources)}`,
    ...(reconcile === null ? [] : [`reconcile: "${reconcile}"`]),
    `sales: ${sales(config)}`,
    `fulfillment: ${sources(config.fulfillment.sources)}`,
  ].join('; ');
}
