/**
 * The Lua scripts behind `InventoryState` (state.ts), one per round trip a producer or worker makes.
 * Merging and settling are scripts so that concurrent producers and workers never lose or resurrect a
 * value: a merge keeps, per field, the highest version; settling removes from pending exactly the
 * entries that were handled, so a newer value merged meanwhile stays for the next job. Each script
 * takes the keys of several SKUs, so a batch costs one call per chunk.
 *
 * A target's state is one hash (state.ts): `p:` pending entries, `a:` applied versions, `k:` acknowledged
 * values, `e:` the ERP's newest entries. A settled pending field is left as '' (a tombstone: one HSET
 * writes it with the rest, where a delete would be a command more); '' reads as absent everywhere.
 * The write locks of every target are fields of one hash (`inv:locks`, field: the target's state key,
 * value `owner|deadline ms`), so a job takes, renews and releases all of its locks with one HMGET and one
 * HSET or HDEL, whatever its number of SKUs. The deadline is compared with Redis's own clock (`TIME`, one
 * call per script), so a lock left by a crashed worker is free once its deadline passed.
 * Per SKU: a merge is two commands (HMGET, HSET), taking the lock and reading two (HGETALL of the state
 * and of the Code's reservations), settling two (HMGET, HSET). The ERP's Stock and SafetyStock entries
 * are also kept in one hash of every target's (`inv:stock`), written by the merge in the same script,
 * so that a kit reads all of its components' figures with one HMGET.
 */
import type { Redis } from 'ioredis';

/** Lua: the lock value's owner and deadline (ms); `free(v, owner, now)` is true when `owner` may take it. */
const LOCK_HELPERS = `
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function free(v, owner, now)
  if not v then return true end
  local o, d = string.match(v, '^(.*)|(%d+)$')
  return o == nil or o == owner or tonumber(d) <= now
end
local function ownerOf(v)
  return v and string.match(v, '^(.*)|%d+$')
end
`;

/**
 * Merges several SKUs in one call. KEYS[1]: the stock figures hash (`inv:stock`, state.ts); then per SKU
 * its state hash. ARGV[1]: the length of the state hashes' common prefix (what is left is the target's
 * key); then per SKU one argument, its fields (`packFields`): field US entry JSON, joined by RS. Per field it keeps the entry with the higher version, as pending
 * (`p:`) and as the ERP's newest (`e:`); among equal versions the later merge wins. Returns per SKU the
 * job priority its change deserves (enqueue.ts): 1 when it lowers the stock the store may sell (stock
 * down, safety stock up), 2 when it raises it, 3 for other fields or no change. One HMGET and at most
 * one HSET per SKU, whatever its number of fields; the new ERP Stock and SafetyStock entries are also
 * written to the stock figures hash (`Stock:{key}`, `SafetyStock:{key}`), one HSET per call.
 */
const MERGE = `
local out, figures = {}, {}
local base = tonumber(ARGV[1])
local function newer(x, y) return not y or x.version > y.version or (x.version == y.version and x.at >= y.at) end
local function decoded(raw) if raw and raw ~= '' then return cjson.decode(raw) end return nil end
for s = 2, #KEYS do
  local key = KEYS[s]
  local fields, raws, wanted = {}, {}, {}
  for field, raw in string.gmatch(ARGV[s], '([^\\30\\31]+)\\31([^\\30]+)') do
    fields[#fields + 1], raws[#raws + 1] = field, raw
  end
  local n = #fields
  for j = 1, n do
    wanted[j] = 'e:' .. fields[j]
    wanted[n + j] = 'p:' .. fields[j]
  end
  local current = redis.call('HMGET', key, unpack(wanted))
  local sets, class = {}, 3
  for j = 1, n do
    local field, raw = fields[j], raws[j]
    local inc = cjson.decode(raw)
    local known = current[j]
    local e = decoded(known)
    -- The same version read again (an inclusive cursor, the overlap) is the same figure: it keeps the
    -- time it was first read, or a reservation booked in between would stop counting against it.
    if e and e.version == inc.version then
      local first = string.match(known, '"observedAt":(%d+)')
      if first then raw = (string.gsub(raw, '"observedAt":%d+', '"observedAt":' .. first, 1)) end
    end
    if newer(inc, decoded(current[n + j])) then
      sets[#sets + 1] = 'p:' .. field
      sets[#sets + 1] = raw
    end
    if newer(inc, e) then
      sets[#sets + 1] = 'e:' .. field
      sets[#sets + 1] = raw
      if field == 'Stock' or field == 'SafetyStock' then
        figures[#figures + 1] = field .. ':' .. string.sub(key, base + 1)
        figures[#figures + 1] = raw
      end
      if (field == 'Stock' or field == 'SafetyStock') and type(inc.value) == 'number' then
        local old = e and e.value
        local down = field == 'Stock' and (type(old) ~= 'number' and inc.value == 0 or type(old) == 'number' and inc.value < old)
          or field == 'SafetyStock' and type(old) == 'number' and inc.value > old
        if down then class = 1 elseif class > 2 and old ~= inc.value then class = 2 end
      end
    end
  end
  if #sets > 0 then redis.call('HSET', key, unpack(sets)) end
  out[#out + 1] = class
end
if #figures > 0 then redis.call('HSET', KEYS[1], unpack(figures)) end
return out
`;

/**
 * Settles several SKUs in one call. KEYS[1]: the locks hash; then per SKU its state hash. ARGV[1]: the
 * owner whose locks are released afterwards, '' to leave the locks alone; then per SKU one argument, its
 * settlements (`packSettlements`), joined by RS, each five values joined by US: mode, field, the handled
 * pending entry's digest ('' = none: the first 16 hex digits of its SHA-1), version, acked value JSON
 * ('' = leave). Mode 'applied' raises the
 * applied version (never lowers it) and records the acked value; every mode but 'stamp' then clears the
 * pending entry only if it is still the one that was handled (same digest). Mode 'stamp' only writes
 * the acknowledged field (`k:@at`: when the store last acknowledged a write).
 */
const SETTLE = `
${LOCK_HELPERS}
for s = 2, #KEYS do
  local key = KEYS[s]
  local versions, vfields, sets, pfields, pdigests = {}, {}, {}, {}, {}
  for settlement in string.gmatch(ARGV[s], '[^\\30]+') do
    local mode, field, digest, version, value = string.match(settlement, '^([^\\31]*)\\31([^\\31]*)\\31([^\\31]*)\\31([^\\31]*)\\31(.*)$')
    if mode == 'stamp' then
      sets[#sets + 1] = 'k:' .. field
      sets[#sets + 1] = value
    else
      if mode == 'applied' then
        local v = tonumber(version)
        if versions[field] == nil then vfields[#vfields + 1] = field end
        if versions[field] == nil or v > versions[field][1] then versions[field] = { v, version } end
        if value ~= '' then
          sets[#sets + 1] = 'k:' .. field
          sets[#sets + 1] = value
        end
      end
      if digest ~= '' then
        pfields[#pfields + 1] = field
        pdigests[#pdigests + 1] = digest
      end
    end
  end
  local wanted = {}
  for j = 1, #vfields do wanted[j] = 'a:' .. vfields[j] end
  for j = 1, #pfields do wanted[#vfields + j] = 'p:' .. pfields[j] end
  if #wanted > 0 then
    local current = redis.call('HMGET', key, unpack(wanted))
    for j = 1, #vfields do
      local c, v = tonumber(current[j]), versions[vfields[j]]
      if not c or v[1] > c then
        sets[#sets + 1] = 'a:' .. vfields[j]
        sets[#sets + 1] = v[2]
      end
    end
    for j = 1, #pfields do
      local c = current[#vfields + j]
      if c and c ~= '' and string.sub(redis.sha1hex(c), 1, 16) == pdigests[j] then
        sets[#sets + 1] = 'p:' .. pfields[j]
        sets[#sets + 1] = ''
      end
    end
  end
  if #sets > 0 then redis.call('HSET', key, unpack(sets)) end
end
if ARGV[1] ~= '' and #KEYS > 1 then
  local fields = {}
  for s = 2, #KEYS do fields[#fields + 1] = KEYS[s] end
  local current = redis.call('HMGET', KEYS[1], unpack(fields))
  local del = {}
  for j = 1, #fields do
    if ownerOf(current[j]) == ARGV[1] then del[#del + 1] = fields[j] end
  end
  if #del > 0 then redis.call('HDEL', KEYS[1], unpack(del)) end
end
return 1
`;

/**
 * Takes the write locks of several SKUs and reads their state: a job's first round trip. KEYS[1]: the
 * locks hash; then per SKU its state hash and its Code's reservation hash. ARGV: the owner and the
 * lock's ttl (ms). Returns per SKU 0 when another owner holds its lock (and its deadline has not
 * passed), else its state and reservation hashes. (The reservation hash outlives the SKU's entry in the
 * set of reserved SKUs: its counters version the published stock, so it is always read.)
 */
const LOCK_AND_READ = `
${LOCK_HELPERS}
local owner, ttl = ARGV[1], tonumber(ARGV[2])
local now = nowMs()
local fields = {}
for k = 2, #KEYS, 2 do fields[#fields + 1] = KEYS[k] end
local current = redis.call('HMGET', KEYS[1], unpack(fields))
local mine = owner .. '|' .. (now + ttl)
local out, sets = {}, {}
for i = 1, #fields do
  if free(current[i], owner, now) then
    sets[#sets + 1] = fields[i]
    sets[#sets + 1] = mine
    out[i] = { redis.call('HGETALL', KEYS[2 * i]), redis.call('HGETALL', KEYS[2 * i + 1]) }
  else
    out[i] = 0
  end
end
if #sets > 0 then redis.call('HSET', KEYS[1], unpack(sets)) end
return out
`;

/**
 * Takes or renews the locks of the state keys KEYS[2…] (in the locks hash KEYS[1]) that are free,
 * expired or already held by the owner ARGV[1], for ARGV[2] ms (re-entry after a crash, and renewal);
 * returns how many it holds.
 */
const LOCK = `
${LOCK_HELPERS}
local owner, ttl = ARGV[1], tonumber(ARGV[2])
local now = nowMs()
local fields = {}
for k = 2, #KEYS do fields[#fields + 1] = KEYS[k] end
local current = redis.call('HMGET', KEYS[1], unpack(fields))
local mine = owner .. '|' .. (now + ttl)
local sets = {}
for i = 1, #fields do
  if free(current[i], owner, now) then
    sets[#sets + 1] = fields[i]
    sets[#sets + 1] = mine
  end
end
if #sets > 0 then redis.call('HSET', KEYS[1], unpack(sets)) end
return #sets / 2
`;

/** Releases the lock of the state key KEYS[2] (in the locks hash KEYS[1]) if the owner ARGV[1] holds it. */
const UNLOCK = `
${LOCK_HELPERS}
if ownerOf(redis.call('HGET', KEYS[1], KEYS[2])) == ARGV[1] then
  return redis.call('HDEL', KEYS[1], KEYS[2])
end
return 0
`;

/**
 * Converts one target's state of the layout before one hash (releases up to 2026-11; keys
 * `inv:pending|applied|acked|erp:{key}`) into its hash, then deletes the old keys. KEYS[1]: the stock
 * figures hash; then per target its state hash, then its pending, applied, acked and ERP keys. ARGV[1]:
 * the length of the state hashes' common prefix. Merged with whatever the hash already holds (a process
 * of this release may have merged into it first): per field the newer pending and ERP entry (as a
 * merge, the ERP Stock and SafetyStock also into the figures hash), the higher applied version, and the
 * acknowledged value of the hash if it has one (written by this release, so later). Returns the number
 * of targets that had old keys.
 */
const CONVERT = `
local function newer(x, y) return not y or x.version > y.version or (x.version == y.version and x.at >= y.at) end
local function decoded(raw) if raw and raw ~= '' then return cjson.decode(raw) end return nil end
local base = tonumber(ARGV[1])
local converted, figures = 0, {}
for s = 2, #KEYS, 5 do
  local key = KEYS[s]
  local sets, found = {}, false
  local function each(okey, prefix, keep)
    local flat = redis.call('HGETALL', okey)
    if #flat > 0 then found = true end
    for i = 1, #flat, 2 do
      local field, value = prefix .. flat[i], flat[i + 1]
      if keep(redis.call('HGET', key, field), value) then
        sets[#sets + 1] = field
        sets[#sets + 1] = value
        if field == 'e:Stock' or field == 'e:SafetyStock' then
          figures[#figures + 1] = flat[i] .. ':' .. string.sub(key, base + 1)
          figures[#figures + 1] = value
        end
      end
    end
  end
  local entry = function(current, old) return current == false or current == '' or newer(cjson.decode(old), decoded(current)) end
  each(KEYS[s + 1], 'p:', entry)
  each(KEYS[s + 2], 'a:', function(current, old) return not tonumber(current) or tonumber(old) > tonumber(current) end)
  each(KEYS[s + 3], 'k:', function(current, old) return current == false end)
  each(KEYS[s + 4], 'e:', entry)
  if #sets > 0 then redis.call('HSET', key, unpack(sets)) end
  if found then
    converted = converted + 1
    redis.call('DEL', KEYS[s + 1], KEYS[s + 2], KEYS[s + 3], KEYS[s + 4])
  end
end
if #figures > 0 then redis.call('HSET', KEYS[1], unpack(figures)) end
return converted
`;

/** The scripts, called with the number of keys first (their key count varies with the SKUs). */
export interface ScriptCommands {
  invMerge(numKeys: number, ...keysThenArgs: string[]): Promise<number[]>;
  invSettle(numKeys: number, ...keysThenArgs: string[]): Promise<number>;
  invLockAndRead(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<Array<0 | string[][]>>;
  invLock(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<number>;
  invUnlock(numKeys: number, ...keysThenArgs: string[]): Promise<number>;
  invConvert(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<number>;
}

/** Defines the scripts on a connection (once per `InventoryState`) and returns them typed. */
export function defineInventoryScripts(redis: Redis): ScriptCommands {
  redis.defineCommand('invMerge', { lua: MERGE });
  redis.defineCommand('invSettle', { lua: SETTLE });
  redis.defineCommand('invLockAndRead', { lua: LOCK_AND_READ });
  redis.defineCommand('invLock', { lua: LOCK });
  // Deletes the lock only if this owner still holds it (an expired lock may belong to another worker now).
  redis.defineCommand('invUnlock', { lua: UNLOCK });
  redis.defineCommand('invConvert', { lua: CONVERT });
  return redis as unknown as ScriptCommands;
}
