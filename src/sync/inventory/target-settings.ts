/**
 * The settings that decide what a target should show (issue 28): the allocation among sites, the sites'
 * shares, caps and safety stocks, the global safety stock, the price lists and each source's
 * `stockRounding`. The values of the last start are kept in Redis (`inv:settings`, none of them a
 * secret), so that a start under other values knows which ones changed (`reevaluate.ts`).
 */
import type { Redis } from 'ioredis';

import type { Config } from '../../config/schema.js';
import { stateKey } from '../../queue/connection.js';

/** Setting name → its value, as JSON. */
export type TargetSettings = Record<string, string>;

/** The settings of `config` that change what a target should show. */
export function targetSettings(config: Pick<Config, 'inventory'>): TargetSettings {
  const { inventory } = config;
  const rounding = Object.fromEntries(inventory.sources.map((source) => [source.name, source.stockRounding ?? 'floor']));
  return {
    'inventory.allocation': JSON.stringify(inventory.allocation),
    'inventory.sites': JSON.stringify(inventory.sites),
    'inventory.safetyStock': JSON.stringify(inventory.safetyStock),
    'inventory.priceLists': JSON.stringify(inventory.priceLists),
    'inventory.sources[].stockRounding': JSON.stringify(rounding),
  };
}

/** The names of the settings whose value differs between `before` and `now`, in `now`'s order. */
export function changedSettings(before: TargetSettings, now: TargetSettings): string[] {
  return Object.keys(now).filter((name) => before[name] !== now[name]);
}

/** The sources whose `stockRounding` changed (the figures they gave were rounded under the old rule). */
export function roundingChanged(before: TargetSettings, now: TargetSettings): string[] {
  const name = 'inventory.sources[].stockRounding';
  const old = JSON.parse(before[name] ?? '{}') as Record<string, string>;
  const current = JSON.parse(now[name] ?? '{}') as Record<string, string>;
  return Object.keys(current).filter((source) => old[source] !== undefined && old[source] !== current[source]);
}

/** The site ids a settings record lists (`inventory.sites`). */
export function settingsSites(settings: TargetSettings): number[] {
  return (JSON.parse(settings['inventory.sites'] ?? '[]') as Array<{ siteId: number }>).map((site) => site.siteId);
}

/** Reads and records the settings of the last start under a prefix. */
export class SettingsRecord {
  readonly #redis: Redis;
  readonly #key: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#key = stateKey(prefix, 'inv', 'settings');
  }

  /** The settings recorded, or undefined before the first start that records them. */
  async read(): Promise<TargetSettings | undefined> {
    const hash = await this.#redis.hgetall(this.#key);
    return Object.keys(hash).length === 0 ? undefined : hash;
  }

  /** Records `settings` (replacing what was there). */
  async write(settings: TargetSettings): Promise<void> {
    await this.#redis.multi().del(this.#key).hset(this.#key, settings).exec();
  }
}
