/**
 * What the snapshot diff keeps in Redis, per source (every key holds ERP codes and hashes, never secrets):
 * - `inv:fp:{source}`        target key → fingerprint of the mapped values in the last complete snapshot;
 * - `inv:held:{source}`      target key → JSON HeldEntry: vanished SKUs the mass guard holds for a person;
 * - `inv:vanished:{source}`  target key → JSON VanishedEntry: SKUs gone from the source (`inventory explain`).
 * A fingerprint is 11 characters (66 bits of SHA-1): a hash field of a short Code and one of these is
 * about 70 bytes of Redis (bench/README.md, "diff").
 */
import { createHash } from 'node:crypto';

import type { Redis } from 'ioredis';

import { stateKey } from '../../../queue/connection.js';
import { execOrThrow } from '../state.js';

/** Fields written or read per Redis command. */
const CHUNK = 1000;

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
 * The fingerprint of a record's values: its fields but `Code` (and `SiteId`, part of the key), in
 * name order, so that a column order or mapping change alone does not count as a change.
 */
export function fingerprint(fields: Record<string, unknown>): string {
  const names = Object.keys(fields)
    .filter((field) => field !== 'Code' && field !== 'SiteId')
    .sort();
  const text = JSON.stringify(names.map((field) => [field, fields[field]]));
  return createHash('sha1').update(text).digest('base64url').slice(0, 11);
}

/** The snapshot diff's Redis state of one prefix. */
export class DiffState {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(kind: 'fp' | 'held' | 'vanished', source: string): string {
    return stateKey(this.#prefix, 'inv', kind, source);
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

  /** The SKUs the mass guard holds for `source`. */
  async held(source: string): Promise<Map<string, HeldEntry>> {
    return parsed<HeldEntry>(await this.#redis.hgetall(this.#key('held', source)));
  }

  /** How many SKUs the mass guard holds for `source`. */
  async heldCount(source: string): Promise<number> {
    return this.#redis.hlen(this.#key('held', source));
  }

  /** Replaces the held SKUs of `source` (none: the guard holds nothing now). */
  async replaceHeld(source: string, keys: readonly string[], entry: HeldEntry): Promise<void> {
    const key = this.#key('held', source);
    const raw = JSON.stringify(entry);
    const multi = this.#redis.multi().del(key);
    for (let start = 0; start < keys.length; start += CHUNK) multi.hset(key, ...keys.slice(start, start + CHUNK).flatMap((k) => [k, raw]));
    await execOrThrow(multi);
  }

  /** Removes SKUs from the held ones (their action was applied). */
  async releaseHeld(source: string, keys: readonly string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += CHUNK) await this.#redis.hdel(this.#key('held', source), ...keys.slice(start, start + CHUNK));
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

  /** The source and version of each SKU's newest ERP stock (`inv:erp:{sku}`, ../state.ts), for SKUs that have one. */
  async newestStock(codes: readonly string[]): Promise<Map<string, { source: string; version: number }>> {
    const out = new Map<string, { source: string; version: number }>();
    for (let start = 0; start < codes.length; start += CHUNK) {
      const chunk = codes.slice(start, start + CHUNK);
      const pipeline = this.#redis.pipeline();
      for (const code of chunk) pipeline.hget(stateKey(this.#prefix, 'inv', 'erp', code), 'Stock');
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
    const scan = async <T>(kind: 'held' | 'vanished'): Promise<Array<[string, T]>> => {
      const out: Array<[string, T]> = [];
      let cursor = '0';
      do {
        const [next, flat] = await this.#redis.hscan(this.#key(kind, source), cursor, 'MATCH', `${globEscape(code)}*`, 'COUNT', CHUNK);
        for (let i = 0; i + 1 < flat.length; i += 2) if (matches(flat[i]!)) out.push([flat[i]!, JSON.parse(flat[i + 1]!) as T]);
        cursor = next;
      } while (cursor !== '0');
      return out;
    };
    return { vanished: await scan<VanishedEntry>('vanished'), held: await scan<HeldEntry>('held') };
  }
}

function parsed<T>(hash: Record<string, string>): Map<string, T> {
  return new Map(Object.entries(hash).map(([key, raw]) => [key, JSON.parse(raw) as T]));
}

/** `code` with the characters HSCAN's MATCH treats as a pattern escaped. */
function globEscape(code: string): string {
  return code.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
