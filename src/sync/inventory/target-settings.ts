/**
 * The settings that decide what a target should show (issue 28): the allocation among sites, the sites'
 * shares, caps and safety stocks, the global safety stock, the price lists and each source's
 * `stockRounding`; and those that decide whether the store takes a write (`inventory.createMissing`,
 * `store.inventoryCreatePath`). The values of the last start are kept in Redis (`inv:settings`, none
 * of them a secret), so that a start under other values knows which ones changed (`reevaluate.ts`).
 */
import type { Redis } from 'ioredis';

import type { Config } from '../../config/schema.js';
import { stateKey } from '../../queue/connection.js';

/** Setting name → its value, as JSON. */
export type TargetSettings = Record<string, string>;

/** A source's `stockRounding` setting, by the source's name. */
const ROUNDING = /^inventory\.sources\.(.+)\.stockRounding$/;

/** Settings that change no figure, only whether the store takes a write: a change re-queues refused writes only. */
const WRITE_SETTINGS: ReadonlySet<string> = new Set(['inventory.createMissing', 'store.inventoryCreatePath']);

/** The settings of `config` that change what a target should show or whether the store takes it (each source's `stockRounding` apart). */
export function targetSettings(config: Pick<Config, 'inventory' | 'store'>): TargetSettings {
  const { inventory } = config;
  const settings: TargetSettings = {
    'inventory.allocation': JSON.stringify(inventory.allocation),
    'inventory.sites': JSON.stringify(inventory.sites),
    'inventory.safetyStock': JSON.stringify(inventory.safetyStock),
    'inventory.priceLists': JSON.stringify(inventory.priceLists),
    'inventory.createMissing': JSON.stringify(inventory.createMissing),
    'store.inventoryCreatePath': JSON.stringify(config.store.inventoryCreatePath),
  };
  for (const source of inventory.sources) settings[`inventory.sources.${source.name}.stockRounding`] = JSON.stringify(source.stockRounding ?? 'floor');
  return settings;
}

/**
 * The names of the settings whose value differs between `before` and `now`, in `now`'s order. A source
 * added or removed changes nothing already published: only a source's `stockRounding` that changed counts.
 */
export function changedSettings(before: TargetSettings, now: TargetSettings): string[] {
  return Object.keys(now).filter((name) => (before[name] !== undefined || !ROUNDING.test(name)) && before[name] !== now[name]);
}

/** True when `changed` holds a setting that changes what a target should show (a figure to compare). */
export function figuresChanged(changed: readonly string[]): boolean {
  return changed.some((name) => !WRITE_SETTINGS.has(name) && !ROUNDING.test(name));
}

/** Of `changed`, the sources whose `stockRounding` changed (the figures they gave were rounded the old way). */
export function roundingChanged(changed: readonly string[]): string[] {
  return changed.flatMap((name) => {
    const source = ROUNDING.exec(name)?.[1];
    return source === undefined ? [] : [source];
  });
}

/** The site ids a settings record lists (`inventory.sites`). */
export function settingsSites(settings: TargetSettings): number[] {
  return (JSON.parse(settings['inventory.sites'] ?? '[]') as Array<{ siteId: number }>).map((site) => site.siteId);
}

/**
 * True when `now` maps a price list to an id `before` did not: an id added, or a code listed in both
 * whose id differs (the ERP's rows of that list were never kept under the new id). A code renamed on
 * the same id is not: the rows kept are the same.
 */
export function priceListIdsMoved(before: TargetSettings, now: TargetSettings): boolean {
  const lists = (settings: TargetSettings) => JSON.parse(settings['inventory.priceLists'] ?? '[]') as Array<{ id: number; code: string }>;
  const old = lists(before);
  return lists(now).some(({ id, code }) => !old.some((list) => list.id === id) || old.some((list) => list.code === code && list.id !== id));
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
