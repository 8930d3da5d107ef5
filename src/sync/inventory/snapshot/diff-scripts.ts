/**
 * The Lua scripts of the snapshot diff (issue 27, DiffState in diff-state.ts): the read's chunks are
 * compared with the previous fingerprints, and the absent SKUs found, in Redis, so that the catalogue
 * stays there and only the changed and the absent SKUs come to the process. Each script takes the same
 * two keys a MULTI of the same commands would (`inv:fp:{source}` and `inv:diff-next:{source}`, one
 * prefix); run by EVALSHA through `defineCommand`.
 */
import type { Redis } from 'ioredis';

/**
 * Compares a chunk of the read with the previous snapshot and stages it. KEYS[1]: the fingerprints
 * (`inv:fp:{source}`), KEYS[2]: this diff's `next`; ARGV: target key and fingerprint pairs, in read order.
 * A row is changed when its key had another fingerprint or none, or when this diff read the key already
 * (staged in KEYS[2] by an earlier chunk, or earlier in this one): a key read twice counts as changed the
 * second time, so that its last read is the one queued. Every fingerprint is staged (HSET KEYS[2]);
 * returns the 0-based indexes of the changed rows only, so that the unchanged 99 % never come back.
 */
const COMPARE_READ = `
local keys, n = {}, #ARGV / 2
if n == 0 then return {} end
for i = 1, n do keys[i] = ARGV[2 * i - 1] end
local previous = redis.call('HMGET', KEYS[1], unpack(keys))
local staged = redis.call('HMGET', KEYS[2], unpack(keys))
local seen, sets, changed = {}, {}, {}
for i = 1, n do
  local key, fp = keys[i], ARGV[2 * i]
  local before = previous[i]
  if staged[i] or seen[key] then before = false end
  seen[key] = true
  sets[#sets + 1] = key
  sets[#sets + 1] = fp
  if before ~= fp then changed[#changed + 1] = i - 1 end
end
if #sets > 0 then redis.call('HSET', KEYS[2], unpack(sets)) end
return changed
`;

/**
 * One HSCAN page of the previous fingerprints (KEYS[1]) from ARGV[1], of about ARGV[2] fields, and of it
 * only the pairs whose key this diff did not stage (absent from KEYS[2], `next`): `{next cursor, {key,
 * fingerprint, …}}`.
 */
const ABSENT_PAGE = `
local page = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local flat, keys, absent = page[2], {}, {}
for i = 1, #flat, 2 do keys[#keys + 1] = flat[i] end
if #keys == 0 then return {page[1], absent} end
local staged = redis.call('HMGET', KEYS[2], unpack(keys))
for j = 1, #keys do
  if not staged[j] then
    absent[#absent + 1] = keys[j]
    absent[#absent + 1] = flat[2 * j]
  end
end
return {page[1], absent}
`;

/** A connection with the diff's scripts defined on it (EVALSHA; the text only when the server lacks it). */
type WithDiffScripts = Redis & {
  invDiffCompare(numKeys: number, ...keysThenArgs: string[]): Promise<number[]>;
  invDiffAbsent(numKeys: number, ...keysThenArgs: Array<string | number>): Promise<[string, string[]]>;
};

/** Connections the scripts are defined on (once each). */
const defined = new WeakSet<Redis>();

/** `redis` with the diff's scripts (defined on it at first use). */
export function withDiffScripts(redis: Redis): WithDiffScripts {
  if (!defined.has(redis)) {
    redis.defineCommand('invDiffCompare', { lua: COMPARE_READ });
    redis.defineCommand('invDiffAbsent', { lua: ABSENT_PAGE });
    defined.add(redis);
  }
  return redis as WithDiffScripts;
}
