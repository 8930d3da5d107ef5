/**
 * The inventory flow's state in Redis, per SKU:
 * - `inv:pending:{sku}`  field → JSON PendingEntry: values read from the ERP, not yet on the store;
 * - `inv:applied:{sku}`  field → version: the newest version the store has taken (or already had);
 * - `inv:acked:{sku}`    field → JSON value: what the store last acknowledged, for change detection;
 * - `inv:lock:{sku}`     a short write lock, so that two jobs never PUT one SKU at once;
 * and per source `inv:cursor:{source}` → JSON cursor (`cursors`, a SourceCursors).
 *
 * Merging and settling are Lua scripts so that concurrent producers and workers never lose or
 * resurrect a value: a merge keeps, per field, the highest version; settling removes from pending
 * exactly the entries that were handled, so a newer value merged meanwhile stays for the next job.
 * These keys hold ERP values and versions only, never secrets.
 */
import type { ChainableCommander, Redis } from 'ioredis';

import { stateKey } from '../../queue/connection.js';
import { RELEASE_IF_OWNER } from '../../queue/redis-lock.js';
import { SourceCursors } from '../drain-source.js';
import type { PendingEntry } from './types.js';

/** Keeps per field the entry with the higher version; among equal versions the later merge wins. */
const MERGE = `
local changed = 0
for i = 1, #ARGV, 2 do
  local field, incoming = ARGV[i], ARGV[i + 1]
  local current = redis.call('HGET', KEYS[1], field)
  local take = not current
  if current then
    local a, b = cjson.decode(incoming), cjson.decode(current)
    take = a.version > b.version or (a.version == b.version and a.at >= b.at)
  end
  if take then
    redis.call('HSET', KEYS[1], field, incoming)
    changed = changed + 1
  end
end
return changed
`;

/**
 * ARGV in groups of five: mode, field, raw pending JSON, version, acked value JSON ('' = leave).
 * mode 'applied' raises the applied version (never lowers it) and records the acked value; every mode
 * then removes the pending entry only if it is still the one that was handled.
 */
const SETTLE = `
for i = 1, #ARGV, 5 do
  local mode, field, raw, version, value = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if mode == 'applied' then
    local current = tonumber(redis.call('HGET', KEYS[2], field))
    if not current or tonumber(version) > current then
      redis.call('HSET', KEYS[2], field, version)
    end
    if value ~= '' then
      redis.call('HSET', KEYS[3], field, value)
    end
  end
  if redis.call('HGET', KEYS[1], field) == raw then
    redis.call('HDEL', KEYS[1], field)
  end
end
return 1
`;

/** Takes the lock when it is free or already ours (re-entry after a crash, and renewal), for ARGV[2] ms. */
const LOCK = `
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`;

interface ScriptCommands {
  invMerge(pendingKey: string, ...fieldAndJson: string[]): Promise<number>;
  invSettle(pendingKey: string, appliedKey: string, ackedKey: string, ...args: string[]): Promise<number>;
  invLock(lockKey: string, owner: string, ttlMs: number): Promise<number>;
  invUnlock(lockKey: string, owner: string): Promise<number>;
}

/** A pending entry as read, with its raw JSON (the identity settle compares against). */
export interface PendingRead {
  raw: string;
  entry: PendingEntry;
}

/** Everything the worker needs about one SKU, read atomically. */
export interface SkuState {
  pending: Map<string, PendingRead>;
  applied: Map<string, number>;
  acked: Map<string, unknown>;
}

/** How a handled pending entry is settled. */
export type Settlement =
  /** The store has the value now (sent and acknowledged, or already equal): record it, clear pending. */
  | { mode: 'applied'; field: string; read: PendingRead; ackValue?: unknown }
  /** Stale or invalid: clear it from pending without recording anything. */
  | { mode: 'drop'; field: string; read: PendingRead };

/** Reads and writes the inventory state of one Redis prefix. */
export class InventoryState {
  readonly #redis: Redis;
  readonly #prefix: string;

  /** The cursor of each source of this flow. */
  readonly cursors: SourceCursors;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.cursors = new SourceCursors(redis, prefix, 'inv');
    redis.defineCommand('invMerge', { numberOfKeys: 1, lua: MERGE });
    redis.defineCommand('invSettle', { numberOfKeys: 3, lua: SETTLE });
    redis.defineCommand('invLock', { numberOfKeys: 1, lua: LOCK });
    // Deletes the lock only if this owner still holds it (an expired lock may belong to another worker now).
    redis.defineCommand('invUnlock', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
  }

  #key(kind: 'pending' | 'applied' | 'acked' | 'lock', sku: string): string {
    return stateKey(this.#prefix, 'inv', kind, sku);
  }

  /** Merges the field entries of several SKUs in one round trip. */
  async merge(items: ReadonlyArray<{ sku: string; entries: Record<string, PendingEntry> }>): Promise<void> {
    if (items.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (const { sku, entries } of items) {
      const args = Object.entries(entries).flatMap(([field, entry]) => [field, JSON.stringify(entry)]);
      if (args.length > 0) (pipeline as unknown as ScriptCommands).invMerge(this.#key('pending', sku), ...args);
    }
    await execOrThrow(pipeline);
  }

  /** Reads pending, applied and acked of a SKU in one transaction. */
  async read(sku: string): Promise<SkuState> {
    const results = await execOrThrow(
      this.#redis
        .multi()
        .hgetall(this.#key('pending', sku))
        .hgetall(this.#key('applied', sku))
        .hgetall(this.#key('acked', sku)),
    );
    const [pending, applied, acked] = results as Array<Record<string, string>>;
    return {
      pending: new Map(Object.entries(pending ?? {}).map(([field, raw]) => [field, { raw, entry: JSON.parse(raw) as PendingEntry }])),
      applied: new Map(Object.entries(applied ?? {}).map(([field, version]) => [field, Number(version)])),
      acked: new Map(Object.entries(acked ?? {}).map(([field, value]) => [field, JSON.parse(value) as unknown])),
    };
  }

  /** Applies the settlements of one SKU atomically. */
  async settle(sku: string, settlements: readonly Settlement[]): Promise<void> {
    if (settlements.length === 0) return;
    const args = settlements.flatMap((s) => [
      s.mode,
      s.field,
      s.read.raw,
      String(s.read.entry.version),
      s.mode === 'applied' && s.ackValue !== undefined ? JSON.stringify(s.ackValue) : '',
    ]);
    await (this.#redis as unknown as ScriptCommands).invSettle(this.#key('pending', sku), this.#key('applied', sku), this.#key('acked', sku), ...args);
  }

  /**
   * Takes the SKU's write lock for `ttlMs`. Deduplication already keeps one job per SKU running, but a
   * failed job retried from the dashboard (or a stalled one recovered) runs beside a newer job: the
   * lock keeps their PUTs from crossing, which could leave an older value on the store. The owner that
   * holds it may take it again: that renews it, and lets a job restarted after a crash continue.
   */
  async lock(sku: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await (this.#redis as unknown as ScriptCommands).invLock(this.#key('lock', sku), owner, ttlMs)) === 1;
  }

  /** Releases the SKU's write lock if `owner` still holds it. */
  async unlock(sku: string, owner: string): Promise<void> {
    await (this.#redis as unknown as ScriptCommands).invUnlock(this.#key('lock', sku), owner);
  }

  /** The applied versions of several SKUs (the reconcile versions cursor-less snapshot rows with them). */
  async appliedVersions(skus: readonly string[]): Promise<Map<string, Map<string, number>>> {
    const out = new Map<string, Map<string, number>>();
    if (skus.length === 0) return out;
    const pipeline = this.#redis.pipeline();
    for (const sku of skus) pipeline.hgetall(this.#key('applied', sku));
    const results = await execOrThrow(pipeline);
    skus.forEach((sku, i) => {
      const hash = (results[i] ?? {}) as Record<string, string>;
      out.set(sku, new Map(Object.entries(hash).map(([field, version]) => [field, Number(version)])));
    });
    return out;
  }
}

/** Runs a pipeline or transaction and throws the first command error instead of returning it. */
async function execOrThrow(commands: ChainableCommander): Promise<unknown[]> {
  const results = (await commands.exec()) ?? [];
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
