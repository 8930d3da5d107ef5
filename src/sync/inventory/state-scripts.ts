/**
 * The Lua scripts behind `InventoryState` (state.ts), one per round trip a producer or worker makes.
 * Merging and settling are scripts so that concurrent producers and workers never lose or resurrect a
 * value: a merge keeps, per field, the highest version; settling removes from pending exactly the
 * entries that were handled, so a newer value merged meanwhile stays for the next job. Each script
 * takes the keys of several SKUs, so a batch costs one call per chunk.
 */
import type { Redis } from 'ioredis';

import { RELEASE_IF_OWNER } from '../../queue/redis-lock.js';

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
export interface ScriptCommands {
  invMerge(numKeys: number, ...keysThenArgs: string[]): Promise<number[]>;
  invSettle(numKeys: number, ...keysThenArgs: string[]): Promise<number>;
  invLockAndRead(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<Array<0 | string[][]>>;
  invLock(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<number>;
  invUnlock(lockKey: string, owner: string): Promise<number>;
}

/** Defines the scripts on a connection (once per `InventoryState`) and returns them typed. */
export function defineInventoryScripts(redis: Redis): ScriptCommands {
  redis.defineCommand('invMerge', { lua: MERGE });
  redis.defineCommand('invSettle', { lua: SETTLE });
  redis.defineCommand('invLockAndRead', { lua: LOCK_AND_READ });
  redis.defineCommand('invLock', { lua: LOCK });
  // Deletes the lock only if this owner still holds it (an expired lock may belong to another worker now).
  redis.defineCommand('invUnlock', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
  return redis as unknown as ScriptCommands;
}
