/**
 * The store's credentials, checked before anything runs: a flow that calls the store with an empty user
 * name or password would only collect refused logins (and may get the account locked), so `config check`
 * and `run` refuse such a configuration up front (exit 78) instead (`credentials.ts`).
 */
import type { Config, SourceConfig } from './schema.js';

function sourceCount(sources: readonly SourceConfig[]): number {
  return sources.filter((source) => source.enabled).length;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * The enabled flows of `config` that call the store, described for a message (`inventory (2 sources)`);
 * empty when none does.
 */
export function flowsCallingStore(config: Readonly<Config>): string[] {
  const flows: string[] = [];
  const inventorySources = sourceCount(config.inventory.sources);
  const reconcile = config.inventory.reconcile.schedule;
  if (inventorySources > 0 || reconcile !== null) {
    const parts = [...(inventorySources > 0 ? [plural(inventorySources, 'source')] : []), ...(reconcile !== null ? ['scheduled reconcile'] : [])];
    flows.push(`inventory (${parts.join(', ')})`);
  }
  if (config.sales.sink !== null) flows.push(`sales (${config.sales.sink.kind} sink)`);
  const fulfillmentSources = sourceCount(config.fulfillment.sources);
  if (fulfillmentSources > 0) flows.push(`fulfillment (${plural(fulfillmentSources, 'source')})`);
  return flows;
}

/** One problem per empty credential the enabled flows need, naming the key and its variable; empty when none. */
export function storeCredentialProblems(config: Readonly<Config>): string[] {
  const flows = flowsCallingStore(config);
  if (flows.length === 0) return [];
  const missing = [
    ...(config.store.username.trim() === '' ? [['store.username', 'STORE_USERNAME']] : []),
    ...(config.store.password === '' ? [['store.password', 'STORE_PASSWORD']] : []),
  ];
  return missing.map(([key, env]) => `${key}: required, the enabled flows call the store: ${flows.join(', ')} (env ${env})`);
}
