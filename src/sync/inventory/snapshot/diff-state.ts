/**
 * What the snapshot diff keeps in Redis, per source (every key holds ERP codes and hashes, never secrets):
 * - `inv:fp:{source}`        target key → fingerprint of the mapped values in the last complete snapshot;
 * - `inv:held:{source}`      a sorted set of target keys, all of score 0 so that they read in Code order
 *                            (ZRANGEBYLEX), page by page: vanished SKUs the mass guard holds for a person;
 *                            `inv:held-at:{source}` is when the diff that held them ran (ms). Releases
 *                            before 0.x kept a hash (target key → `{"at": ms}`): it is moved at first use;
 * - `inv:vanished:{source}`  target key → JSON VanishedEntry: SKUs gone from the source (`inventory explain`);
 * - `inv:vanished-counts`    JSON `[source, reason]` → SKUs vanished by a person's confirm (or keep), any
 *                            process: the daemon's `storesync_vanished_total` takes them at its next scrape.
 * A fingerprint is 11 characters (66 bits of SHA-1): a hash field of a short Code and one of these is
 * about 70 bytes of Redis (bench/README.md, "diff").
 */
import * as crypto from 'node:crypto';

import type { Redis } from 'ioredis';

import { stateKey } from '../../../queue/connection.js';
import { execOrThrow, STATE_FIELD, targetStateKey } from '../state.js';
import { pastTargetsOf } from '../target-key.js';
import { withDiffScripts } from './diff-scripts.js';

/** Fields written or read per Redis command. */
const CHUNK = 1000;

/**
 * Moves the held SKUs of a source from the layout before 0.x (KEYS[1] a hash: target key → `{"at": ms}`)
 * to today's (a sorted set of score 0, the oldest `at` in KEYS[2]), in one step so that no reader sees
 * half of it; KEYS[3] is scratch. Read by HSCAN, so Redis never holds the whole hash in a reply.
 */
const UPGRADE_HELD = `
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return 0 end
redis.call('DEL', KEYS[3])
local cursor, oldest, n = '0', nil, 0
repeat
  local page = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', 500)
  cursor = page[1]
  local args = {}
  for i = 1, #page[2], 2 do
    args[#args + 1] = 0
    args[#args + 1] = page[2][i]
    local at = tonumber(cjson.decode(page[2][i + 1]).at)
    if at and (oldest == nil or at < oldest) then oldest = at end
  end
  if #args > 0 then n = n + redis.call('ZADD', KEYS[3], unpack(args)) end
until cursor == '0'
redis.call('DEL', KEYS[1])
if n > 0 then redis.call('RENAME', KEYS[3], KEYS[1]) end
if oldest then redis.call('SET', KEYS[2], string.format('%.0f', oldest)) end
return n
`;

/**
 * A diff's staging keys (`inv:diff-{kind}:{source}`), alive only while one diff of the source runs, so
 * that the daemon holds one chunk of the catalogue, never all of it:
 * - `next`  target key → fingerprint of every row read (and of the absent SKUs whose fingerprint stays):
 *           it becomes `inv:fp:{source}` in one step when the diff ends (`commitFingerprints`);
 * - `rows`  target key → JSON `[Code, cursor, values]` of the changed rows, queued once the read is complete;
 * - `kept`  Codes of refused rows (kept as they were);
 * - `gone`  target key → previous fingerprint of the SKUs absent from the snapshot (vanished or held);
 * - `held`  the next held set, built page by page and renamed over `inv:held:{source}`;
 * - `old`   the previous fingerprints between their replacement and their (lazy) deletion.
 */
export type StagingKind = 'diff-next' | 'diff-rows' | 'diff-kept' | 'diff-gone' | 'diff-held' | 'diff-old';

const STAGING: readonly StagingKind[] = ['diff-next', 'diff-rows', 'diff-kept', 'diff-gone', 'diff-held', 'diff-old'];

/**
 * Replaces KEYS[1] (the fingerprints) by KEYS[2] (the staged ones; none: no fingerprint is left), in one
 * step; the old hash goes by KEYS[3] and UNLINK, freed outside Redis' main thread when large.
 */
const COMMIT_FINGERPRINTS = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('RENAME', KEYS[1], KEYS[3]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[1]) end
redis.call('UNLINK', KEYS[3])
return 1
`;

/** A SKU the mass guard holds. */
export interface HeldEntry {
  /** When the diff that held it ran (ms). */
  at: number;
}

/** A SKU gone from a source. */
export interface VanishedEntry {
  /** When storesync learned of it (ms). */
  at: number;
  /** Absent from a complete snapshot, or named by the deletions query. */
  reason: 'absent' | 'deleted';
  /** What was done: the source's `vanished.action`. */
  action: 'zero' | 'unpublish' | 'keep';
  /** The deletion's version (its cursor as ms); a change newer than it brings the SKU back. */
  version?: number;
  /** Confirmed by a person after the mass guard held it. */
  confirmed?: boolean;
}

/**
 * SHA-1 of `text` as base64url: `crypto.hash` where it exists (Node ≥ 20.12 and 21.7: one call, no Hash
 * object, 2–4× cheaper; the diff's largest CPU per row), else a Hash. The same value: prints stay comparable.
 */
const sha1: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha1', text, 'base64url') : (text) => crypto.createHash('sha1').update(text).digest('base64url');

/**
 * The fingerprint of a record's values: its fields but `Code` (and `SiteId`, part of the key), in
 * name order, so that a column order or mapping change alone does not count as a change.
 */
export function fingerprint(fields: Record<string, unknown>): string {
  const names = Object.keys(fields)
    .filter((field) => field !== 'Code' && field !== 'SiteId')
    .sort();
  const text = JSON.stringify(names.map((field) => [field, fields[field]]));
  return sha1(text).slice(0, 11);
}

/** The snapshot diff's Redis state of one prefix. */
export class DiffState {
  readonly #redis: Redis;
  readonly #prefix: string;
  /** Sources whose held SKUs are known to be in today's layout. */
  readonly #upgraded = new Set<string>();

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(kind: 'fp' | 'held' | 'held-at' | 'held-upgrade' | 'vanished' | StagingKind, source: string): string {
    return stateKey(this.#prefix, 'inv', kind, source);
  }

  /** The held set's key, once a hash left by an earlier release is moved to today's layout. */
  async #heldKey(source: string): Promise<string> {
    const key = this.#key('held', source);
    if (!this.#upgraded.has(source)) {
      await this.#redis.eval(UPGRADE_HELD, 3, key, this.#key('held-at', source), this.#key('held-upgrade', source));
      this.#upgraded.add(source);
    }
    return key;
  }

  /** Every fingerprint of the source's last complete snapshot (read by HSCAN, in slices). */
  async fingerprints(source: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    let cursor = '0';
    do {
      const [next, flat] = await this.#redis.hscan(this.#key('fp', source), cursor, 'COUNT', CHUNK * 5);
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i]!, flat[i + 1]!);
      cursor = next;
    } while (cursor !== '0');
    return out;
  }

  /** One page of a staging hash of the source (HSCAN from `cursor`, '0' first): the next cursor ('0' at the end) and the pairs. */
  async fingerprintPage(source: string, cursor: string, kind: 'diff-gone' | 'diff-rows'): Promise<[string, Array<[string, string]>]> {
    const [next, flat] = await this.#redis.hscan(this.#key(kind, source), cursor, 'COUNT', CHUNK);
    return [next, pairsOf(flat)];
  }

  /** Deletes the staging keys of a diff of `source` (before it starts, and once it ended or failed). */
  async clearStaging(source: string): Promise<void> {
    await this.#redis.unlink(...STAGING.map((kind) => this.#key(kind, source)));
  }

  /**
   * Compares a chunk of the read (`prints`: target key → fingerprint, in read order) with the source's last
   * complete snapshot and stages every fingerprint in `next`, in one call (COMPARE_READ). Returns the indexes
   * (into `prints`, ascending) of the changed rows: new, of another fingerprint, or of a key this diff read
   * already (in an earlier chunk or earlier in this one).
   */
  async compareRead(source: string, prints: ReadonlyArray<[string, string]>): Promise<number[]> {
    const changed: number[] = [];
    for (let start = 0; start < prints.length; start += CHUNK) {
      const slice = prints.slice(start, start + CHUNK).flat();
      const indexes = await withDiffScripts(this.#redis).invDiffCompare(2, this.#key('fp', source), this.#key('diff-next', source), ...slice);
      for (const index of indexes) changed.push(start + index);
    }
    return changed;
  }

  /**
   * Stages the changed rows of a chunk (`rows`: key → JSON) and the Codes of refused rows (one MULTI).
   * Returns how many of `rows`' keys were not staged as changed yet (a key changed twice counts once).
   */
  async stageRead(source: string, rows: ReadonlyArray<[string, string]>, kept: readonly string[]): Promise<number> {
    if (rows.length + kept.length === 0) return 0;
    const multi = this.#redis.multi();
    if (rows.length > 0) multi.hset(this.#key('diff-rows', source), ...rows.flat());
    if (kept.length > 0) multi.sadd(this.#key('diff-kept', source), ...kept);
    const results = await execOrThrow(multi);
    return rows.length > 0 ? Number(results[0]) : 0;
  }

  /**
   * One page of the source's previous fingerprints (HSCAN from `cursor`, '0' first) that this diff did not
   * stage in `next` (ABSENT_PAGE): the next cursor ('0' at the end) and those pairs only, so that the
   * catalogue stays in Redis and the process sees the absent SKUs.
   */
  async absentPage(source: string, cursor: string): Promise<[string, Array<[string, string]>]> {
    const [next, flat] = await withDiffScripts(this.#redis).invDiffAbsent(2, this.#key('fp', source), this.#key('diff-next', source), cursor, CHUNK);
    return [next, pairsOf(flat)];
  }

  /** For each of `codes`: whether it is the Code of a row this diff refused (staged in `kept`). */
  async keptCodes(source: string, codes: readonly string[]): Promise<boolean[]> {
    if (codes.length === 0) return [];
    const flags = (await this.#redis.call('SMISMEMBER', this.#key('diff-kept', source), ...codes)) as number[];
    return flags.map((flag) => flag === 1);
  }

  /** Stages absent SKUs: `stay` keep their fingerprint (into `next`), `gone` are vanished or held (into `gone`). */
  async stageAbsent(source: string, stay: ReadonlyArray<[string, string]>, gone: ReadonlyArray<[string, string]>): Promise<void> {
    const multi = this.#redis.multi();
    if (stay.length > 0) multi.hset(this.#key('diff-next', source), ...stay.flat());
    if (gone.length > 0) multi.hset(this.#key('diff-gone', source), ...gone.flat());
    if (stay.length + gone.length > 0) await execOrThrow(multi);
  }

  /** How many SKUs the diff staged as gone. */
  async goneCount(source: string): Promise<number> {
    return this.#redis.hlen(this.#key('diff-gone', source));
  }

  /**
   * Holds every SKU staged as gone (the mass guard): their fingerprints stay, and they replace the held
   * set in one step once all are staged. Returns up to 10 of them, in byte order (for the log).
   */
  async holdGone(source: string, entry: HeldEntry): Promise<string[]> {
    const key = await this.#heldKey(source);
    const next = this.#key('diff-held', source);
    let cursor = '0';
    do {
      const [after, pairs] = await this.fingerprintPage(source, cursor, 'diff-gone');
      if (pairs.length > 0) {
        await execOrThrow(this.#redis.multi().hset(this.#key('diff-next', source), ...pairs.flat()).zadd(next, ...pairs.flatMap(([k]) => [0, k])));
      }
      cursor = after;
    } while (cursor !== '0');
    const multi = this.#redis.multi().del(key);
    multi.eval(`if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('RENAME', KEYS[1], KEYS[2]) end return 1`, 2, next, key);
    multi.set(this.#key('held-at', source), String(entry.at));
    await execOrThrow(multi);
    return this.#redis.zrange(key, 0, 9);
  }

  /** Makes the staged fingerprints the source's (in one step): see COMMIT_FINGERPRINTS. */
  async commitFingerprints(source: string): Promise<void> {
    await this.#redis.eval(COMMIT_FINGERPRINTS, 3, this.#key('fp', source), this.#key('diff-next', source), this.#key('diff-old', source));
  }

  /** Which of `keys` have a fingerprint of `source`. */
  async hasFingerprints(source: string, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < keys.length; start += CHUNK) {
      const chunk = keys.slice(start, start + CHUNK);
      const values = await this.#redis.hmget(this.#key('fp', source), ...chunk);
      chunk.forEach((key, i) => {
        if (values[i] !== null) found.add(key);
      });
    }
    return found;
  }

  /** Sets fingerprints and removes others (after a complete snapshot, or as SKUs vanish). */
  async writeFingerprints(source: string, sets: ReadonlyMap<string, string>, removes: readonly string[] = []): Promise<void> {
    const key = this.#key('fp', source);
    const entries = [...sets];
    for (let start = 0; start < entries.length; start += CHUNK) {
      await this.#redis.hset(key, ...entries.slice(start, start + CHUNK).flat());
    }
    for (let start = 0; start < removes.length; start += CHUNK) await this.#redis.hdel(key, ...removes.slice(start, start + CHUNK));
  }

  /** How many SKUs the source's last complete snapshot had. */
  async fingerprintCount(source: string): Promise<number> {
    return this.#redis.hlen(this.#key('fp', source));
  }

  /** Up to `count` target keys the mass guard holds for `source`, in byte order, from after `after` (a key, or a bound). */
  async heldPage(source: string, count: number, after?: string): Promise<string[]> {
    return this.#redis.zrangebylex(await this.#heldKey(source), after === undefined ? '-' : `(${after}`, '+', 'LIMIT', 0, count);
  }

  /** When the diff that holds the SKUs of `source` ran (ms), or null when none is held. */
  async heldSince(source: string): Promise<number | null> {
    const key = await this.#heldKey(source);
    const [count, at] = await Promise.all([this.#redis.zcard(key), this.#redis.get(this.#key('held-at', source))]);
    return count === 0 || at === null ? null : Number(at);
  }

  /** How many SKUs the mass guard holds for `source`. */
  async heldCount(source: string): Promise<number> {
    return this.#redis.zcard(await this.#heldKey(source));
  }

  /** Replaces the held SKUs of `source` (none: the guard holds nothing now). */
  async replaceHeld(source: string, keys: readonly string[], entry: HeldEntry): Promise<void> {
    const key = await this.#heldKey(source);
    const multi = this.#redis.multi().del(key);
    for (let start = 0; start < keys.length; start += CHUNK) multi.zadd(key, ...keys.slice(start, start + CHUNK).flatMap((k) => [0, k]));
    if (keys.length > 0) multi.set(this.#key('held-at', source), String(entry.at));
    else multi.del(this.#key('held-at', source));
    await execOrThrow(multi);
  }

  /** Removes SKUs from the held ones (their action was applied, or they were kept). */
  async releaseHeld(source: string, keys: readonly string[]): Promise<void> {
    const key = await this.#heldKey(source);
    for (let start = 0; start < keys.length; start += CHUNK) await this.#redis.zrem(key, ...keys.slice(start, start + CHUNK));
  }

  /** Adds `count` SKUs vanished by a person's confirm (or keep) of `source` to what the daemon's counter takes. */
  async countConfirmed(source: string, reason: VanishedEntry['reason'], count: number): Promise<void> {
    if (count > 0) await this.#redis.hincrby(stateKey(this.#prefix, 'inv', 'vanished-counts'), JSON.stringify([source, reason]), count);
  }

  /** Takes (and removes) the counts `countConfirmed` added, from whichever process: each is taken once. */
  async takeConfirmedCounts(): Promise<Array<{ source: string; reason: VanishedEntry['reason']; count: number }>> {
    const key = stateKey(this.#prefix, 'inv', 'vanished-counts');
    const [counts] = (await execOrThrow(this.#redis.multi().hgetall(key).del(key))) as [Record<string, string>, number];
    return Object.entries(counts).map(([field, count]) => {
      const [source, reason] = JSON.parse(field) as [string, VanishedEntry['reason']];
      return { source, reason, count: Number(count) };
    });
  }

  /** Records SKUs as vanished from `source`. */
  async markVanished(source: string, entries: ReadonlyArray<[string, VanishedEntry]>): Promise<void> {
    for (let start = 0; start < entries.length; start += CHUNK) {
      await this.#redis.hset(this.#key('vanished', source), ...entries.slice(start, start + CHUNK).flatMap(([key, entry]) => [key, JSON.stringify(entry)]));
    }
  }

  /** The vanished entries of `keys` in `source` (those that have one). */
  async vanished(source: string, keys: readonly string[]): Promise<Map<string, VanishedEntry>> {
    const out = new Map<string, VanishedEntry>();
    for (let start = 0; start < keys.length; start += CHUNK) {
      const chunk = keys.slice(start, start + CHUNK);
      const values = await this.#redis.hmget(this.#key('vanished', source), ...chunk);
      chunk.forEach((key, i) => {
        const raw = values[i];
        if (raw !== null && raw !== undefined) out.set(key, JSON.parse(raw) as VanishedEntry);
      });
    }
    return out;
  }

  /** Forgets that SKUs vanished from `source` (they came back). */
  async clearVanished(source: string, keys: readonly string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += CHUNK) await this.#redis.hdel(this.#key('vanished', source), ...keys.slice(start, start + CHUNK));
  }

  /** The source and version of each SKU's newest ERP stock (the `e:Stock` field of `inv:target:{sku}`, ../state.ts), for SKUs that have one. */
  async newestStock(codes: readonly string[]): Promise<Map<string, { source: string; version: number }>> {
    const out = new Map<string, { source: string; version: number }>();
    for (let start = 0; start < codes.length; start += CHUNK) {
      const chunk = codes.slice(start, start + CHUNK);
      const pipeline = this.#redis.pipeline();
      for (const code of chunk) pipeline.hget(targetStateKey(this.#prefix, code), `${STATE_FIELD.erp}Stock`);
      const results = await execOrThrow(pipeline);
      chunk.forEach((code, i) => {
        const raw = results[i];
        if (typeof raw !== 'string') return;
        const { source, version } = JSON.parse(raw) as { source: string; version: number };
        out.set(code, { source, version });
      });
    }
    return out;
  }

  /** Every vanished and held entry of `source` whose key is `code` or `code` on a site (`inventory explain`). */
  async entriesOf(source: string, code: string): Promise<{ vanished: Array<[string, VanishedEntry]>; held: Array<[string, HeldEntry]> }> {
    const matches = (key: string): boolean => key === code || key.startsWith(`${code}\u001f`);
    const vanished: Array<[string, VanishedEntry]> = [];
    let cursor = '0';
    do {
      const [next, flat] = await this.#redis.hscan(this.#key('vanished', source), cursor, 'MATCH', `${globEscape(code)}*`, 'COUNT', CHUNK);
      for (let i = 0; i + 1 < flat.length; i += 2) if (matches(flat[i]!)) vanished.push([flat[i]!, JSON.parse(flat[i + 1]!) as VanishedEntry]);
      cursor = next;
    } while (cursor !== '0');
    const keys = await this.#redis.zrangebylex(await this.#heldKey(source), `[${code}`, `(${pastTargetsOf(code)}`);
    const at = await this.heldSince(source);
    const held = keys.filter(matches).map((key): [string, HeldEntry] => [key, { at: at ?? 0 }]);
    return { vanished, held };
  }
}

/** A flat reply of hash fields and values (HSCAN's) as pairs. */
function pairsOf(flat: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  return pairs;
}

/** `code` with the characters HSCAN's MATCH treats as a pattern escaped. */
export function globEscape(code: string): string {
  return code.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
