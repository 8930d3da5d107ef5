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
 * Merges several SKUs in one call. KEYS: per SKU its pending hash and its ERP hash; ARGV: per SKU the
 * number of fields, then field and entry JSON pairs. Per field it keeps the entry with the higher
 * version in both hashes; among equal versions the later merge wins. Returns per SKU the job priority
 * its change deserves (enqueue.ts): 1 when it lowers the stock the store may sell (stock down, safety
 * stock up), 2 when it raises it, 3 for other fields or no change. Two reads and at most two writes
 * per SKU, whatever its number of fields.
 */
const MERGE = `
local out = {}
local a = 1
local function newer(x, y) return not y or x.version > y.version or (x.version == y.version and x.at >= y.at) end
for s = 1, #KEYS, 2 do
  local pkey, ekey = KEYS[s], KEYS[s + 1]
  local n = tonumber(ARGV[a])
  local fields, raws = {}, {}
  for j = 1, n do
    fields[j], raws[j] = ARGV[a + 2 * j - 1], ARGV[a + 2 * j]
  end
  a = a + 1 + 2 * n
  local known = redis.call('HMGET', ekey, unpack(fields))
  local pending = redis.call('HMGET', pkey, unpack(fields))
  local psets, esets, class = {}, {}, 3
  for j = 1, n do
    local field, raw = fields[j], raws[j]
    local inc = cjson.decode(raw)
    local e = known[j] and cjson.decode(known[j])
    -- The same version read again (an inclusive cursor, the overlap) is the same figure: it keeps the
    -- time it was first read, or a reservation booked in between would stop counting against it.
    if e and e.version == inc.version then
      local first = string.match(known[j], '"observedAt":(%d+)')
      if first then raw = (string.gsub(raw, '"observedAt":%d+', '"observedAt":' .. first, 1)) end
    end
    if newer(inc, pending[j] and cjson.decode(pending[j])) then
      psets[#psets + 1] = field
      psets[#psets + 1] = raw
    end
    if newer(inc, e) then
      esets[#esets + 1] = field
      esets[#esets + 1] = raw
      if (field == 'Stock' or field == 'SafetyStock') and type(inc.value) == 'number' then
        local old = e and e.value
        local down = field == 'Stock' and (type(old) ~= 'number' and inc.value == 0 or type(old) == 'number' and inc.value < old)
          or field == 'SafetyStock' and type(old) == 'number' and inc.value > old
        if down then class = 1 elseif class > 2 and old ~= inc.value then class = 2 end
      end
    end
  end
  if #psets > 0 then redis.call('HSET', pkey, unpack(psets)) end
  if #esets > 0 then redis.call('HSET', ekey, unpack(esets)) end
  out[#out + 1] = class
end
return out
`;

/**
 * Settles several SKUs in one call. KEYS: per SKU its pending, applied, acked and lock keys. ARGV[1]:
 * the owner whose locks are released afterwards, '' to leave the locks alone; then per SKU the number
 * of settlements and five values each: mode, field, raw pending JSON, version, acked value JSON ('' =
 * leave). Mode 'applied' raises the applied version (never lowers it) and records the acked value;
 * every mode but 'stamp' then removes the pending entry only if it is still the one that was handled.
 * Mode 'stamp' only writes the acked hash (`@at`: when the store last acknowledged a write).
 */
const SETTLE = `
local a = 2
for s = 1, #KEYS, 4 do
  local pkey, akey, kkey, lkey = KEYS[s], KEYS[s + 1], KEYS[s + 2], KEYS[s + 3]
  local n = tonumber(ARGV[a])
  a = a + 1
  local versions, vfields, acks, pfields, praws = {}, {}, {}, {}, {}
  for j = 1, n do
    local mode, field, raw, version, value = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
    a = a + 5
    if mode == 'stamp' then
      acks[#acks + 1] = field
      acks[#acks + 1] = value
    else
      if mode == 'applied' then
        local v = tonumber(version)
        if versions[field] == nil then vfields[#vfields + 1] = field end
        if versions[field] == nil or v > versions[field][1] then versions[field] = { v, version } end
        if value ~= '' then
          acks[#acks + 1] = field
          acks[#acks + 1] = value
        end
      end
      pfields[#pfields + 1] = field
      praws[#praws + 1] = raw
    end
  end
  if #vfields > 0 then
    local current = redis.call('HMGET', akey, unpack(vfields))
    local sets = {}
    for j = 1, #vfields do
      local c, v = tonumber(current[j]), versions[vfields[j]]
      if not c or v[1] > c then
        sets[#sets + 1] = vfields[j]
        sets[#sets + 1] = v[2]
      end
    end
    if #sets > 0 then redis.call('HSET', akey, unpack(sets)) end
  end
  if #acks > 0 then redis.call('HSET', kkey, unpack(acks)) end
  if #pfields > 0 then
    local current = redis.call('HMGET', pkey, unpack(pfields))
    local del = {}
    for j = 1, #pfields do
      if current[j] == praws[j] then del[#del + 1] = pfields[j] end
    end
    if #del > 0 then redis.call('HDEL', pkey, unpack(del)) end
  end
  if ARGV[1] ~= '' and redis.call('GET', lkey) == ARGV[1] then
    redis.call('DEL', lkey)
  end
end
return 1
`;

/**
 * Takes the write locks of several SKUs and reads their state: a job's first round trip. KEYS: per SKU
 * its pending, applied, acked, lock, ERP and reservation keys. ARGV: the owner and the lock's ttl (ms).
 * Returns per SKU 0 when another owner holds its lock, else its pending, applied, acked, ERP and
 * reservation hashes. (The reservation hash outlives the SKU's entry in the set of reserved SKUs: its
 * counters version the published stock, so it is always read.)
 */
const LOCK_AND_READ = `
local owner, ttl = ARGV[1], ARGV[2]
local out = {}
for k = 1, #KEYS, 6 do
  local taken = redis.call('SET', KEYS[k + 3], owner, 'NX', 'PX', ttl)
  if not taken and redis.call('GET', KEYS[k + 3]) == owner then
    taken = redis.call('SET', KEYS[k + 3], owner, 'PX', ttl)
  end
  if taken then
    out[#out + 1] = { redis.call('HGETALL', KEYS[k]), redis.call('HGETALL', KEYS[k + 1]), redis.call('HGETALL', KEYS[k + 2]),
      redis.call('HGETALL', KEYS[k + 4]), redis.call('HGETALL', KEYS[k + 5]) }
  else
    out[#out + 1] = 0
  end
end
return out
`;

/**
 * Takes or renews the locks (KEYS) that are free or already held by the owner ARGV[1], for ARGV[2] ms
 * (re-entry after a crash, and renewal); returns how many it holds.
 */
const LOCK = `
local held = 0
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current == false or current == ARGV[1] then
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
    held = held + 1
  end
end
return held
`;

/** The scripts, called with the number of keys first (their key count varies with the SKUs). */
interface ScriptCommands {
  invMerge(numKeys: number, ...keysThenArgs: string[]): Promise<number[]>;
  invSettle(numKeys: number, ...keysThenArgs: string[]): Promise<number>;
  invLockAndRead(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<Array<0 | string[][]>>;
  invLock(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<number>;
  invUnlock(lockKey: string, owner: string): Promise<number>;
}

/** The per-SKU keys. */
type StateKind = 'pending' | 'applied' | 'acked' | 'lock' | 'erp' | 'res';

/** SKUs per script call: one call holds Redis for the time it runs, so large batches go in chunks. */
const SCRIPT_CHUNK = 200;

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

/** What a job settles for one SKU. */
export interface SkuSettlement {
  sku: string;
  settlements: readonly Settlement[];
  /** When the store acknowledged the job's write of the SKU, if it did. */
  ackedAt?: number;
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
    redis.defineCommand('invMerge', { lua: MERGE });
    redis.defineCommand('invSettle', { lua: SETTLE });
    redis.defineCommand('invLockAndRead', { lua: LOCK_AND_READ });
    redis.defineCommand('invLock', { lua: LOCK });
    // Deletes the lock only if this owner still holds it (an expired lock may belong to another worker now).
    redis.defineCommand('invUnlock', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
  }

  get #scripts(): ScriptCommands {
    return this.#redis as unknown as ScriptCommands;
  }

  #key(kind: StateKind, sku: string): string {
    return stateKey(this.#prefix, 'inv', kind, sku);
  }

  /**
   * Merges the field entries of several SKUs (one script call per chunk); returns per SKU the job
   * priority its change deserves (the most urgent when a SKU comes twice).
   */
  async merge(items: ReadonlyArray<{ sku: string; entries: Record<string, PendingEntry> }>): Promise<Map<string, number>> {
    const priorities = new Map<string, number>();
    const merged = items.filter(({ entries }) => Object.keys(entries).length > 0);
    for (let start = 0; start < merged.length; start += SCRIPT_CHUNK) {
      const chunk = merged.slice(start, start + SCRIPT_CHUNK);
      const keys = chunk.flatMap(({ sku }) => [this.#key('pending', sku), this.#key('erp', sku)]);
      const args = chunk.flatMap(({ entries }) => {
        const fields = Object.entries(entries);
        return [String(fields.length), ...fields.flatMap(([field, entry]) => [field, JSON.stringify(entry)])];
      });
      const results = await this.#scripts.invMerge(keys.length, ...keys, ...args);
      chunk.forEach(({ sku }, i) => priorities.set(sku, Math.min(Number(results[i]), priorities.get(sku) ?? Number.POSITIVE_INFINITY)));
    }
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
   * Takes the write locks of several SKUs (see `lock`) and reads their state (as `read`), one script
   * call per chunk; a SKU whose lock another owner holds maps to undefined.
   */
  async lockAndReadMany(skus: readonly string[], owner: string, ttlMs: number): Promise<Map<string, SkuState | undefined>> {
    const out = new Map<string, SkuState | undefined>();
    for (let start = 0; start < skus.length; start += SCRIPT_CHUNK) {
      const chunk = skus.slice(start, start + SCRIPT_CHUNK);
      const keys = chunk.flatMap((sku) => ['pending', 'applied', 'acked', 'lock', 'erp', 'res'].map((kind) => this.#key(kind as StateKind, sku)));
      const results = await this.#scripts.invLockAndRead(keys.length, ...keys, owner, ttlMs);
      chunk.forEach((sku, i) => {
        const result = results[i];
        if (!result) {
          out.set(sku, undefined);
          return;
        }
        const [pending, applied, acked, erp, reservations] = result.map(hashOf);
        out.set(sku, skuState(pending ?? {}, applied ?? {}, acked ?? {}, erp ?? {}, reservations ?? {}));
      });
    }
    return out;
  }

  /** `lockAndReadMany` of one SKU: its state, or undefined when another owner holds its lock. */
  async lockAndRead(sku: string, owner: string, ttlMs: number): Promise<SkuState | undefined> {
    return (await this.lockAndReadMany([sku], owner, ttlMs)).get(sku);
  }

  /**
   * Applies the settlements of several SKUs (one script call per chunk, each SKU atomically); `ackedAt`
   * records when the store acknowledged a write of the SKU; with `unlockOwner`, then releases each
   * SKU's write lock if that owner still holds it (a job's last round trip).
   */
  async settleMany(items: readonly SkuSettlement[], unlockOwner?: string): Promise<void> {
    const work = unlockOwner === undefined ? items.filter((item) => item.settlements.length > 0 || item.ackedAt !== undefined) : items;
    for (let start = 0; start < work.length; start += SCRIPT_CHUNK) {
      const chunk = work.slice(start, start + SCRIPT_CHUNK);
      const keys = chunk.flatMap(({ sku }) => [this.#key('pending', sku), this.#key('applied', sku), this.#key('acked', sku), this.#key('lock', sku)]);
      const args = chunk.flatMap(({ settlements, ackedAt }) => {
        const groups = settlements.flatMap((s) => [
          s.mode,
          s.field,
          s.read.raw,
          String(s.read.entry.version),
          s.mode === 'applied' && s.ackValue !== undefined ? JSON.stringify(s.ackValue) : '',
        ]);
        if (ackedAt !== undefined) groups.push('stamp', ACKED_AT_FIELD, '', '0', JSON.stringify(ackedAt));
        return [String(groups.length / 5), ...groups];
      });
      await this.#scripts.invSettle(keys.length, ...keys, unlockOwner ?? '', ...args);
    }
  }

  /** `settleMany` of one SKU. */
  async settle(sku: string, settlements: readonly Settlement[], ackedAt?: number, unlockOwner?: string): Promise<void> {
    await this.settleMany([{ sku, settlements, ...(ackedAt === undefined ? {} : { ackedAt }) }], unlockOwner);
  }

  /** Takes or renews the write locks of several SKUs for `ttlMs` (see `lock`); returns how many the owner holds. */
  async lockMany(skus: readonly string[], owner: string, ttlMs: number): Promise<number> {
    if (skus.length === 0) return 0;
    const keys = skus.map((sku) => this.#key('lock', sku));
    return this.#scripts.invLock(keys.length, ...keys, owner, ttlMs);
  }

  /**
   * Takes the SKU's write lock for `ttlMs`. A SKU changed again while its job waits is in two jobs, and
   * a failed job retried from the dashboard (or a stalled one recovered) runs beside a newer job: the
   * lock keeps their PUTs from crossing, which could leave an older value on the store. The owner that
   * holds it may take it again: that renews it, and lets a job restarted after a crash continue.
   */
  async lock(sku: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.lockMany([sku], owner, ttlMs)) === 1;
  }

  /** Releases the SKU's write lock if `owner` still holds it. */
  async unlock(sku: string, owner: string): Promise<void> {
    await this.#scripts.invUnlock(this.#key('lock', sku), owner);
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
