/**
 * The inventory flow's state in Redis, per SKU:
 * - `inv:pending:{sku}`  field → JSON PendingEntry: values read from the ERP, not yet on the store;
 * - `inv:applied:{sku}`  field → version: the newest version the store has taken (or already had);
 * - `inv:acked:{sku}`    field → JSON value: what the store last acknowledged, for change detection;
 * - `inv:lock:{sku}`     a short write lock, so that two jobs never PUT one SKU at once;
 * - `inv:erp:{sku}`      field → JSON PendingEntry: the newest value the ERP gave (kept once sent): the
 *   published stock is computed from it, and `inventory explain` shows it;
 * - `inv:res:{sku}`      the SKU's reservations (`reservations.ts`), read here with the rest;
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

/**
 * Keeps per field the entry with the higher version, in the pending hash (KEYS[1]) and in the hash of
 * the ERP's last values (KEYS[2]) alike; among equal versions the later merge wins. Returns the job
 * priority the change deserves (enqueue.ts): 1 when it lowers the stock the store may sell (stock
 * down, safety stock up), 2 when it raises it, 3 for other fields or no change.
 */
const MERGE = `
local class = 3
for i = 1, #ARGV, 2 do
  local field, incoming = ARGV[i], ARGV[i + 1]
  local a = cjson.decode(incoming)
  -- The same version read again (an inclusive cursor, the overlap) is the same figure: it keeps the
  -- time it was first read, or a reservation booked in between would stop counting against it.
  local known = redis.call('HGET', KEYS[2], field)
  if known and cjson.decode(known).version == a.version then
    local first = string.match(known, '"observedAt":(%d+)')
    if first then incoming = (string.gsub(incoming, '"observedAt":%d+', '"observedAt":' .. first, 1)) end
  end
  for k = 1, 2 do
    local current = redis.call('HGET', KEYS[k], field)
    local b = current and cjson.decode(current)
    local take = not b or a.version > b.version or (a.version == b.version and a.at >= b.at)
    if take then
      redis.call('HSET', KEYS[k], field, incoming)
      if k == 2 and (field == 'Stock' or field == 'SafetyStock') and type(a.value) == 'number' then
        local old = b and b.value
        local down = field == 'Stock' and (type(old) ~= 'number' and a.value == 0 or type(old) == 'number' and a.value < old)
          or field == 'SafetyStock' and type(old) == 'number' and a.value > old
        if down then class = 1 elseif class > 2 and old ~= a.value then class = 2 end
      end
    end
  end
end
return class
`;

/**
 * ARGV[1]: the owner whose lock (KEYS[4]) is released afterwards, '' to leave the lock alone; then
 * groups of five: mode, field, raw pending JSON, version, acked value JSON ('' = leave).
 * mode 'applied' raises the applied version (never lowers it) and records the acked value; every mode
 * then removes the pending entry only if it is still the one that was handled. Mode 'stamp' only
 * writes the acked hash (`@at`: when the store last acknowledged a write).
 */
const SETTLE = `
for i = 2, #ARGV, 5 do
  local mode, field, raw, version, value = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if mode == 'stamp' then
    redis.call('HSET', KEYS[3], field, value)
  elseif mode == 'applied' then
    local current = tonumber(redis.call('HGET', KEYS[2], field))
    if not current or tonumber(version) > current then
      redis.call('HSET', KEYS[2], field, version)
    end
    if value ~= '' then
      redis.call('HSET', KEYS[3], field, value)
    end
  end
  if mode ~= 'stamp' and redis.call('HGET', KEYS[1], field) == raw then
    redis.call('HDEL', KEYS[1], field)
  end
end
if ARGV[1] ~= '' and redis.call('GET', KEYS[4]) == ARGV[1] then
  redis.call('DEL', KEYS[4])
end
return 1
`;

/**
 * The lock script (KEYS[4], owner ARGV[1], ttl ARGV[2]) followed, when taken, by the SKU's pending,
 * applied, acked, ERP and reservation hashes (KEYS 1–3, 5, 6): a job's first round trip. Returns 0
 * when another owner holds the lock.
 */
const LOCK_AND_READ = `
local current = redis.call('GET', KEYS[4])
if current ~= false and current ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[2])
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]),
  redis.call('HGETALL', KEYS[5]), redis.call('HGETALL', KEYS[6]) }
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
  invMerge(pendingKey: string, erpKey: string, ...fieldAndJson: string[]): Promise<number>;
  invSettle(pendingKey: string, appliedKey: string, ackedKey: string, lockKey: string, ...args: string[]): Promise<number>;
  invLockAndRead(...keysThenOwnerAndTtl: Array<string | number>): Promise<0 | [string[], string[], string[], string[], string[]]>;
  invLock(lockKey: string, owner: string, ttlMs: number): Promise<number>;
  invUnlock(lockKey: string, owner: string): Promise<number>;
}

/** The acked-hash field holding when the store last acknowledged a write of the SKU (ms). */
export const ACKED_AT_FIELD = '@at';

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
  /** The newest value the ERP gave per field (sent or not). */
  erp: Map<string, PendingEntry>;
  /** The SKU's reservation hash as stored (`parseSkuReservations` reads it). */
  reservations: Record<string, string>;
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
    redis.defineCommand('invMerge', { numberOfKeys: 2, lua: MERGE });
    redis.defineCommand('invSettle', { numberOfKeys: 4, lua: SETTLE });
    redis.defineCommand('invLockAndRead', { numberOfKeys: 6, lua: LOCK_AND_READ });
    redis.defineCommand('invLock', { numberOfKeys: 1, lua: LOCK });
    // Deletes the lock only if this owner still holds it (an expired lock may belong to another worker now).
    redis.defineCommand('invUnlock', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
  }

  #key(kind: 'pending' | 'applied' | 'acked' | 'lock' | 'erp' | 'res', sku: string): string {
    return stateKey(this.#prefix, 'inv', kind, sku);
  }

  /**
   * Merges the field entries of several SKUs in one round trip; returns per SKU the job priority its
   * change deserves (the most urgent when a SKU comes twice).
   */
  async merge(items: ReadonlyArray<{ sku: string; entries: Record<string, PendingEntry> }>): Promise<Map<string, number>> {
    const priorities = new Map<string, number>();
    const merged = items.filter(({ entries }) => Object.keys(entries).length > 0);
    if (merged.length === 0) return priorities;
    const pipeline = this.#redis.pipeline();
    for (const { sku, entries } of merged) {
      const args = Object.entries(entries).flatMap(([field, entry]) => [field, JSON.stringify(entry)]);
      (pipeline as unknown as ScriptCommands).invMerge(this.#key('pending', sku), this.#key('erp', sku), ...args);
    }
    const results = await execOrThrow(pipeline);
    merged.forEach(({ sku }, i) => priorities.set(sku, Math.min(Number(results[i]), priorities.get(sku) ?? Number.POSITIVE_INFINITY)));
    return priorities;
  }

  /** Reads pending, applied, acked, the ERP's last values and the reservations of a SKU in one transaction. */
  async read(sku: string): Promise<SkuState> {
    const results = await execOrThrow(
      this.#redis
        .multi()
        .hgetall(this.#key('pending', sku))
        .hgetall(this.#key('applied', sku))
        .hgetall(this.#key('acked', sku))
        .hgetall(this.#key('erp', sku))
        .hgetall(this.#key('res', sku)),
    );
    const [pending, applied, acked, erp, reservations] = results as Array<Record<string, string>>;
    return skuState(pending ?? {}, applied ?? {}, acked ?? {}, erp ?? {}, reservations ?? {});
  }

  /**
   * Takes the SKU's write lock (see `lock`) and reads its state (as `read`) in the same round trip;
   * undefined when another owner holds the lock.
   */
  async lockAndRead(sku: string, owner: string, ttlMs: number): Promise<SkuState | undefined> {
    const result = await (this.#redis as unknown as ScriptCommands).invLockAndRead(
      this.#key('pending', sku),
      this.#key('applied', sku),
      this.#key('acked', sku),
      this.#key('lock', sku),
      this.#key('erp', sku),
      this.#key('res', sku),
      owner,
      ttlMs,
    );
    if (result === 0) return undefined;
    const [pending, applied, acked, erp, reservations] = result.map(hashOf);
    return skuState(pending ?? {}, applied ?? {}, acked ?? {}, erp ?? {}, reservations ?? {});
  }

  /**
   * Applies the settlements of one SKU atomically; `ackedAt` records when the store acknowledged a
   * write; with `unlockOwner`, then releases the SKU's write lock if that owner still holds it (a job's
   * last round trip).
   */
  async settle(sku: string, settlements: readonly Settlement[], ackedAt?: number, unlockOwner?: string): Promise<void> {
    if (settlements.length === 0 && ackedAt === undefined && unlockOwner === undefined) return;
    const args = settlements.flatMap((s) => [
      s.mode,
      s.field,
      s.read.raw,
      String(s.read.entry.version),
      s.mode === 'applied' && s.ackValue !== undefined ? JSON.stringify(s.ackValue) : '',
    ]);
    if (ackedAt !== undefined) args.push('stamp', ACKED_AT_FIELD, '', '0', JSON.stringify(ackedAt));
    await (this.#redis as unknown as ScriptCommands).invSettle(
      this.#key('pending', sku),
      this.#key('applied', sku),
      this.#key('acked', sku),
      this.#key('lock', sku),
      unlockOwner ?? '',
      ...args,
    );
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

/** A SKU's state from its hashes as HGETALL gives them. */
function skuState(
  pending: Record<string, string>,
  applied: Record<string, string>,
  acked: Record<string, string>,
  erp: Record<string, string>,
  reservations: Record<string, string>,
): SkuState {
  return {
    pending: new Map(Object.entries(pending).map(([field, raw]) => [field, { raw, entry: JSON.parse(raw) as PendingEntry }])),
    applied: new Map(Object.entries(applied).map(([field, version]) => [field, Number(version)])),
    acked: new Map(Object.entries(acked).map(([field, value]) => [field, JSON.parse(value) as unknown])),
    erp: new Map(Object.entries(erp).map(([field, raw]) => [field, JSON.parse(raw) as PendingEntry])),
    reservations,
  };
}

/** HGETALL's flat reply as a Lua script returns it → a record of field → value. */
function hashOf(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}

/** Runs a pipeline or transaction and throws the first command error instead of returning it. */
export async function execOrThrow(commands: ChainableCommander): Promise<unknown[]> {
  const results = (await commands.exec()) ?? [];
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
